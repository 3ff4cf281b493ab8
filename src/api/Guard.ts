/**
 * Runs one public call, re-throwing its failure as the error a user can act on (Sluice wraps every
 * call of every namespace in it: an unmigrated database, a refused login, a server that is down).
 */
export type Guard = <T>(fn: () => Promise<T>) => Promise<T>;
