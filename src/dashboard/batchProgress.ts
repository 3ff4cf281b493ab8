import type { BatchStatus } from '../batches/getBatch.ts';
import { html } from './html.ts';

/**
 * A batch's progress as a bar (<progress>: done of size) and its percentage: done = succeeded +
 * dead + cancelled, the dead share shown apart so that a batch that failed does not read as done.
 */
export function batchProgress(b: Pick<BatchStatus, 'size' | 'pending' | 'dead'>) {
  const done = Math.max(0, b.size - b.pending);
  const percent = b.size === 0 ? 100 : Math.floor((100 * done) / b.size);
  return html`<progress max="${b.size}" value="${done}" data-progress="${percent}">${percent} %</progress> ${percent} %${b.dead > 0 ? html` <span class="bad">(${b.dead} dead)</span>` : ''}`;
}
