/**
 * The most bytes of JSON a stored payload is read up to, unpacked or not: the ceiling of
 * maxPayloadBytes (options.ts), the largest payload any process of an install can have written.
 * Not the reading process's own maxPayloadBytes: the processes of one install may run with
 * different values (the CLI's worker and dashboard run with the default), and a reader set lower
 * than the enqueuer would refuse payloads that were valid when written. A packed text is bounded
 * far below it by its length (PAYLOAD_INLINE_MAX_BYTES: its 762 deflated bytes unpack to at most
 * ~790 KB, deflate's ratio being at most 1032:1); the inflate's maxOutputLength holds it anyway.
 */
export const MAX_PAYLOAD_BYTES = 15 * 1024 * 1024;
