/**
 * `npm run docs`: writes the references generated from the code — docs/reference/options.md (from
 * the options files' doc comments) and docs/reference/cli.md (from each command's help). Their
 * sources are listed in sources.ts; test/docs/references.test.ts fails when a committed page is stale.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { renderReferences } from './references.ts';

const root = resolve(import.meta.dirname, '../..');
for (const page of await renderReferences(root)) {
  mkdirSync(dirname(join(root, page.path)), { recursive: true });
  writeFileSync(join(root, page.path), page.text);
  process.stderr.write(`wrote ${page.path}\n`);
}
