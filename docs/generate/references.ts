import { renderApiReference } from './apiReference.ts';
import { renderCliReference } from './cliReference.ts';
import { renderOptionsReference } from './optionsReference.ts';
import { API_PAGE, CLI_PAGE, OPTIONS_PAGE } from './sources.ts';

/** Every page generated from the code: its path from the repository root, and its text. */
export async function renderReferences(root: string): Promise<{ path: string; text: string }[]> {
  return [
    { path: OPTIONS_PAGE, text: renderOptionsReference(root) },
    { path: CLI_PAGE, text: await renderCliReference(root) },
    { path: API_PAGE, text: renderApiReference(root) },
  ];
}
