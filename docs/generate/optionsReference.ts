import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { OPTIONS_PAGE, OPTIONS_SOURCES, type OptionsSource } from './sources.ts';

/** One field of an options type, as its declaration and doc comment say. */
export interface OptionDoc {
  readonly name: string;
  readonly type: string;
  readonly optional: boolean;
  readonly description: string;
  /** The `@defaultValue` tag's text, or null when the field has none. */
  readonly defaultValue: string | null;
}

export interface OptionsTypeDoc extends OptionsSource {
  /** The first sentence of the interface's own doc comment, or ''. */
  readonly summary: string;
  readonly options: readonly OptionDoc[];
}

/**
 * Reads each options type of OPTIONS_SOURCES with the TypeScript parser (no type checker: one file
 * at a time): its fields in declaration order, the fields of interfaces it extends in the same
 * file first, each with its type as written, its doc comment and its `@defaultValue` tag.
 */
export function readOptionsTypes(root: string): OptionsTypeDoc[] {
  const files = new Map<string, ts.SourceFile>();
  const parsed = (file: string): ts.SourceFile => {
    let sf = files.get(file);
    if (!sf) {
      sf = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
      files.set(file, sf);
    }
    return sf;
  };
  for (const file of new Set(OPTIONS_SOURCES.map((s) => s.file))) {
    const listed = new Set(OPTIONS_SOURCES.filter((s) => s.file === file).map((s) => s.name));
    for (const i of exportedInterfaces(parsed(file))) {
      const name = i.name.text;
      if (name.endsWith('Options') && !name.startsWith('Resolved') && !listed.has(name)) {
        throw new Error(`${file} exports ${name}, which docs/generate/sources.ts does not list in OPTIONS_SOURCES`);
      }
    }
  }
  return OPTIONS_SOURCES.map((source) => {
    const sf = parsed(source.file);
    const declaration = findInterface(sf, source.name);
    return { ...source, summary: firstSentence(docText(declaration).description), options: fieldsOf(sf, declaration) };
  });
}

function exportedInterfaces(sf: ts.SourceFile): ts.InterfaceDeclaration[] {
  return sf.statements.filter(
    (s): s is ts.InterfaceDeclaration =>
      ts.isInterfaceDeclaration(s) && (s.modifiers ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword),
  );
}

function findInterface(sf: ts.SourceFile, name: string): ts.InterfaceDeclaration {
  const found = exportedInterfaces(sf).find((i) => i.name.text === name);
  if (!found) throw new Error(`${sf.fileName} exports no interface ${name} (see docs/generate/sources.ts)`);
  return found;
}

function fieldsOf(sf: ts.SourceFile, declaration: ts.InterfaceDeclaration): OptionDoc[] {
  const inherited = (declaration.heritageClauses ?? []).flatMap((clause) =>
    clause.types.flatMap((t) => {
      const base = t.expression.getText(sf);
      const own = sf.statements.find(
        (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === base,
      );
      if (!own)
        throw new Error(`${sf.fileName}: ${declaration.name.text} extends ${base}, which is not declared in that file`);
      return fieldsOf(sf, own);
    }),
  );
  const own = declaration.members.flatMap((member): OptionDoc[] => {
    if (!(ts.isPropertySignature(member) || ts.isMethodSignature(member)) || !member.name) return [];
    const { description, defaultValue } = docText(member);
    const name = member.name.getText(sf);
    const type = ts.isMethodSignature(member)
      ? `(${member.parameters.map((p) => p.getText(sf)).join(', ')}) => ${member.type?.getText(sf) ?? 'void'}`
      : (member.type?.getText(sf) ?? 'unknown');
    return [{ name, type: oneLine(type), optional: member.questionToken !== undefined, description, defaultValue }];
  });
  return [...inherited, ...own];
}

/** A declaration's doc comment: its text (one line) and its `@defaultValue` tag (one line), if any. */
function docText(node: ts.Node): { description: string; defaultValue: string | null } {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  const description = docs.map((d) => ts.getTextOfJSDocComment(d.comment) ?? '').join(' ');
  const tag = docs.flatMap((d) => d.tags ?? []).find((t) => t.tagName.text === 'defaultValue');
  const defaultValue = tag ? (ts.getTextOfJSDocComment(tag.comment) ?? '') : null;
  return { description: oneLine(description), defaultValue: defaultValue === null ? null : oneLine(defaultValue) };
}

/** A type's summary on the page: the first sentence of its doc comment (the rest is often about the source). */
function firstSentence(text: string): string {
  return /^.*?[.!?](?=\s|$)/.exec(text)?.[0] ?? text;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** A table cell: pipes escaped (also inside code spans, as GitHub's tables require), never empty. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|') || '—';
}

/** The options reference page, docs/reference/options.md. */
export function renderOptionsReference(root: string): string {
  const types = readOptionsTypes(root);
  const pageDir = join(root, OPTIONS_PAGE, '..');
  const lines = [
    '# Options reference',
    '',
    '<!-- Generated by `npm run docs` from the doc comments of the files in docs/generate/sources.ts. Do not edit. -->',
    '',
    'Every option sluice takes, with its type, its default and what it does, read from the doc comments',
    'and `@defaultValue` tags of the source (so this page cannot drift from the code: a test fails when it',
    'is stale). Durations are in milliseconds; sizes in bytes. A key a call does not know is refused, never',
    'ignored: every object of options of the public API (these, and every filter, page, limit and promise,',
    'nested ones too) throws an `OptionsError` naming the key, the call and the nearest known name, and',
    'writes nothing — `enqueueBatch(jobs, { transaction: trx })` says "did you mean trx?", and so does a',
    'knex transaction passed where the options go. An unknown job field is a `JobValidationError`, an',
    'unknown field of a job definition a `JobDefinitionError`, each with the name it most likely meant.',
    '',
    ...types.map((t) => `- [${t.name}](#${t.name.toLowerCase()}): \`${t.takenBy}\``),
  ];
  for (const t of types) {
    const source = relative(pageDir, join(root, t.file));
    lines.push('', `## ${t.name}`, '', `Taken by \`${t.takenBy}\`. Source: [${t.file}](${source}).`);
    if (t.summary) lines.push('', t.summary);
    lines.push('', '| option | type | default | what it does |', '| --- | --- | --- | --- |');
    for (const o of t.options) {
      const fallback = o.optional ? '—' : 'required';
      lines.push(
        `| \`${o.name}\` | ${cell(`\`${o.type}\``)} | ${cell(o.defaultValue ?? fallback)} | ${cell(o.description)} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
