import { join, relative } from 'node:path';
import ts from 'typescript';
import { API_ENTRIES, API_PAGE, type ApiEntry } from './sources.ts';

/** One public call: where it is reached from, its signatures as the checker prints them, its doc comment. */
export interface ApiCall {
  /** How an application reaches it: `sluice.jobs.get`, `new Worker`…`worker.start`, `defineJob`. */
  readonly path: string;
  readonly signatures: readonly string[];
  readonly description: string;
  /** The `@throws` tags' text, one per tag. */
  readonly throws: readonly string[];
  /** The `@deprecated` tag's text, or null. */
  readonly deprecated: string | null;
  /** A property (not a call): its type. */
  readonly property: boolean;
}

export interface ApiSection {
  readonly title: string;
  /** The section's doc comment (the class's, the namespace's factory's), first paragraph. */
  readonly summary: string;
  readonly source: string;
  readonly calls: readonly ApiCall[];
}

export interface ErrorDoc {
  readonly name: string;
  readonly codes: readonly string[];
  readonly description: string;
}

const FLAGS =
  ts.TypeFormatFlags.NoTruncation |
  ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope |
  ts.TypeFormatFlags.WriteArrowStyleSignature;

function program(root: string): ts.Program {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('cannot read tsconfig.json');
  return ts.createProgram(
    API_ENTRIES.map((e) => join(root, e.file)),
    { ...config.options, noEmit: true },
  );
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** A doc comment's text as Markdown: its lines kept (a list, a code block), trailing spaces dropped. */
function markdownOf(text: string): string {
  return text
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
}

/** A symbol's doc comment; a shorthand property (`{ list }`) has the comment of the value it names. */
function docsOf(checker: ts.TypeChecker, symbol: ts.Symbol): { text: string; tags: ts.JSDocTagInfo[] } {
  let text = ts.displayPartsToString(symbol.getDocumentationComment(checker));
  let tags = symbol.getJsDocTags(checker);
  const shorthand = symbol.declarations?.find(ts.isShorthandPropertyAssignment);
  if (text === '' && tags.length === 0 && shorthand) {
    const value = checker.getShorthandAssignmentValueSymbol(shorthand);
    if (value) {
      text = ts.displayPartsToString(value.getDocumentationComment(checker));
      tags = value.getJsDocTags(checker);
    }
  }
  return { text: markdownOf(text), tags };
}

function tagText(tag: ts.JSDocTagInfo): string {
  return oneLine(ts.displayPartsToString(tag.text));
}

function callOf(checker: ts.TypeChecker, path: string, name: string, symbol: ts.Symbol, at: ts.Node): ApiCall {
  const type = checker.getTypeOfSymbolAtLocation(symbol, at);
  const calls = type.getCallSignatures();
  const { text, tags } = docsOf(checker, symbol);
  const sigDocs = calls.flatMap((s) => s.getJsDocTags());
  const all = [...tags, ...sigDocs];
  const sigText = calls
    .map((s) => ts.displayPartsToString(s.getDocumentationComment(checker)))
    .filter((t) => t !== '')
    .map(markdownOf);
  const description = text || [...new Set(sigText)].join('\n\n');
  const deprecated = all.find((t) => t.name === 'deprecated');
  const decl = symbol.declarations?.[0];
  const property =
    calls.length === 0 ||
    (decl !== undefined &&
      (ts.isPropertyDeclaration(decl) || ts.isGetAccessorDeclaration(decl)) &&
      !isFunctionValued(decl));
  const written = decl && ts.isPropertyDeclaration(decl) && decl.type ? decl.type.getText() : null;
  const readonly = decl !== undefined && (ts.isGetAccessorDeclaration(decl) || isReadonly(decl));
  return {
    path,
    signatures: property
      ? [`${readonly ? 'readonly ' : ''}${name}: ${written ?? checker.typeToString(type, at, FLAGS)}`]
      : calls.map(
          (s) => `${name}${checker.signatureToString(s, at, FLAGS & ~ts.TypeFormatFlags.WriteArrowStyleSignature)}`,
        ),
    description,
    throws: [...new Set(all.filter((t) => t.name === 'throws').map(tagText))],
    deprecated: deprecated ? tagText(deprecated) : null,
    property,
  };
}

/** A class property whose value is a function written in place (`readonly jobs = …` is not). */
function isFunctionValued(decl: ts.Declaration): boolean {
  return (
    ts.isPropertyDeclaration(decl) &&
    decl.initializer !== undefined &&
    (ts.isArrowFunction(decl.initializer) || ts.isFunctionExpression(decl.initializer))
  );
}

function isReadonly(decl: ts.Declaration): boolean {
  return (ts.canHaveModifiers(decl) ? (ts.getModifiers(decl) ?? []) : []).some(
    (m) => m.kind === ts.SyntaxKind.ReadonlyKeyword,
  );
}

/** The first paragraph of a doc comment (a class's comment goes on about its workings after it). */
function firstParagraph(text: string): string {
  return (text.split(/\n\s*\n/)[0] ?? '').trim();
}

/** The public members of a type: no `#private`, `private`, `protected` or `@internal` member. */
function publicMembers(checker: ts.TypeChecker, type: ts.Type): ts.Symbol[] {
  return checker.getPropertiesOfType(type).filter((p) => {
    const name = p.getName();
    if (name.startsWith('#') || name.startsWith('__@')) return false;
    if (p.getJsDocTags(checker).some((t) => t.name === 'internal')) return false;
    const mods = p.declarations?.flatMap((d) => (ts.canHaveModifiers(d) ? (ts.getModifiers(d) ?? []) : [])) ?? [];
    return !mods.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword || m.kind === ts.SyntaxKind.ProtectedKeyword);
  });
}

function summaryOf(checker: ts.TypeChecker, symbol: ts.Symbol | undefined): string {
  if (!symbol) return '';
  return firstParagraph(markdownOf(ts.displayPartsToString(symbol.getDocumentationComment(checker))));
}

/**
 * Reads the public API with the type checker, from the entries of API_ENTRIES: each exported
 * function, each exported class's public members (the namespaces of `Sluice` — `sluice.jobs`, … —
 * each a section of its own), and the error classes with their codes.
 */
export function readApi(root: string): { sections: ApiSection[]; errors: ErrorDoc[] } {
  let read = readings.get(root);
  if (!read) {
    read = readApiOnce(root);
    readings.set(root, read);
  }
  return read;
}

/** One reading per root and process: building the program takes seconds, and the page and the tests share it. */
const readings = new Map<string, { sections: ApiSection[]; errors: ErrorDoc[] }>();

function readApiOnce(root: string): { sections: ApiSection[]; errors: ErrorDoc[] } {
  const prog = program(root);
  const checker = prog.getTypeChecker();
  const sections: ApiSection[] = [];
  const errors: ErrorDoc[] = [];
  for (const entry of API_ENTRIES) {
    const sf = prog.getSourceFile(join(root, entry.file));
    if (!sf) throw new Error(`cannot read ${entry.file}`);
    const module = checker.getSymbolAtLocation(sf);
    if (!module) throw new Error(`${entry.file} is not a module`);
    const exports = checker.getExportsOfModule(module).map((e) => ({
      name: e.getName(),
      symbol: e.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(e) : e,
    }));
    const functions: ApiCall[] = [];
    const classes = new Map<string, ApiSection[]>();
    for (const { name, symbol } of exports) {
      const decl = symbol.declarations?.[0];
      if (!decl) continue;
      if (symbol.flags & ts.SymbolFlags.Function) {
        functions.push(callOf(checker, name, name, symbol, decl));
      } else if (symbol.flags & ts.SymbolFlags.Class) {
        if (isError(checker, symbol)) {
          if (name === symbol.getName()) errors.push(errorDoc(checker, symbol));
          continue;
        }
        if (!entry.classes.includes(name))
          throw new Error(`${entry.file} exports the class ${name}, which docs/generate/sources.ts does not list`);
        classes.set(name, classSections(checker, entry, name, symbol, decl, root));
      }
    }
    if (functions.length > 0) {
      sections.push({
        title: `Functions of '${entry.importFrom}'`,
        summary: entry.summary,
        source: entry.file,
        calls: functions.sort((a, b) => a.path.localeCompare(b.path)),
      });
    }
    for (const name of entry.classes) {
      const found = classes.get(name);
      if (!found) throw new Error(`docs/generate/sources.ts lists ${name}, which ${entry.file} does not export`);
      sections.push(...found);
    }
  }
  return { sections, errors: errors.sort((a, b) => a.name.localeCompare(b.name)) };
}

function isError(checker: ts.TypeChecker, symbol: ts.Symbol): boolean {
  const type = checker.getDeclaredTypeOfSymbol(symbol);
  return checker.getBaseTypes(type as ts.InterfaceType).some((b) => {
    const name = b.getSymbol()?.getName();
    return name === 'Error' || (b.getSymbol() !== undefined && isError(checker, b.getSymbol() as ts.Symbol));
  });
}

/** An error class: its doc comment and the `SLUICE_…` codes its constructor passes (or its parent's, inherited). */
function errorDoc(checker: ts.TypeChecker, symbol: ts.Symbol): ErrorDoc {
  const decl = symbol.declarations?.find(ts.isClassDeclaration);
  const codes = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) && /^SLUICE_[A-Z_]+$/.test(node.text)) codes.add(node.text);
    node.forEachChild(visit);
  };
  if (decl) visit(decl);
  return { name: symbol.getName(), codes: [...codes], description: oneLine(summaryOf(checker, symbol)) };
}

/** The class's own section, and one per namespace property (`jobs`, `queues`, …) whose type is an object of calls. */
function classSections(
  checker: ts.TypeChecker,
  entry: ApiEntry,
  name: string,
  symbol: ts.Symbol,
  decl: ts.Node,
  root: string,
): ApiSection[] {
  const instance = entry.instanceName[name] ?? name.charAt(0).toLowerCase() + name.slice(1);
  const type = checker.getDeclaredTypeOfSymbol(symbol);
  const own: ApiCall[] = [];
  const namespaces: ApiSection[] = [];
  for (const member of publicMembers(checker, type)) {
    const memberName = member.getName();
    const memberType = checker.getTypeOfSymbolAtLocation(member, decl);
    const inner = publicMembers(checker, memberType).filter(
      (p) => checker.getTypeOfSymbolAtLocation(p, decl).getCallSignatures().length > 0,
    );
    const listed = entry.namespaces.includes(`${name}.${memberName}`);
    const typeName = checker.typeToString(checker.getTypeOfSymbol(member));
    if (!listed && /Api$/.test(typeName))
      throw new Error(`${name}.${memberName} is a namespace (${typeName}) that docs/generate/sources.ts does not list`);
    if (listed && inner.length > 0) {
      const path = `${instance}.${memberName}`;
      const calls = inner.map((p) => callOf(checker, `${path}.${p.getName()}`, p.getName(), p, decl));
      if (memberType.getCallSignatures().length > 0) {
        calls.push({ ...callOf(checker, path, `${memberName}`, member, decl), path: `${path}()` });
      }
      const source = member.declarations?.[0]?.getSourceFile().fileName ?? '';
      namespaces.push({
        title: path,
        summary: summaryOf(checker, member),
        source: relative(root, factoryFile(checker, memberType) ?? source),
        calls: calls.sort((a, b) => a.path.localeCompare(b.path)),
      });
      continue;
    }
    own.push(callOf(checker, `${instance}.${memberName}`, memberName, member, decl));
  }
  own.sort((a, b) => Number(a.property) - Number(b.property) || a.path.localeCompare(b.path));
  if (entry.constructible.includes(name)) {
    const ctor = checker.getTypeOfSymbolAtLocation(symbol, decl).getConstructSignatures();
    own.unshift({
      path: `new ${name}`,
      signatures: ctor.map(
        (s) =>
          `new ${name}${checker.signatureToString(s, decl, FLAGS & ~ts.TypeFormatFlags.WriteArrowStyleSignature).replace(/: [^:]*$/, '')}`,
      ),
      description: [
        ...new Set(ctor.map((s) => markdownOf(ts.displayPartsToString(s.getDocumentationComment(checker))))),
      ]
        .filter((t) => t !== '')
        .join('\n\n'),
      throws: [
        ...new Set(ctor.flatMap((s) => s.getJsDocTags().filter((t) => t.name === 'throws')).map((t) => tagText(t))),
      ],
      deprecated: null,
      property: false,
    });
  }
  return [
    {
      title: name,
      summary: summaryOf(checker, symbol),
      source: relative(root, decl.getSourceFile().fileName),
      calls: own,
    },
    ...namespaces,
  ];
}

/** The file of the object literal a namespace's type comes from (`src/api/jobsApi.ts`). */
function factoryFile(checker: ts.TypeChecker, type: ts.Type): string | undefined {
  const props = checker.getPropertiesOfType(type);
  return props[0]?.declarations?.[0]?.getSourceFile().fileName;
}

function anchor(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** A table cell: pipes escaped, never empty. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|') || '—';
}

/** The method reference page, docs/reference/api.md. */
export function renderApiReference(root: string): string {
  const { sections, errors } = readApi(root);
  const pageDir = join(root, API_PAGE, '..');
  const lines = [
    '# API reference',
    '',
    '<!-- Generated by `npm run docs` from the doc comments of the public API (docs/generate/sources.ts). Do not edit. -->',
    '',
    'Every public call of `sluice` and `sluice/testing`: its signatures (as the type checker prints them,',
    'return types included), what it does and what it throws, read from the doc comments of the source',
    '(so this page cannot drift from the code: a test fails when it is stale). The options each call',
    'takes are in the [options reference](options.md); the guides show the calls at work.',
    '',
    '**Errors every call of `sluice` can throw.** A call that talks to the database rejects with a',
    '`ConnectionError` when the server is down, refuses the login or the pool has no connection left (its',
    'message says which, the password masked), and with a `SchemaVersionError` when the tables are not',
    'migrated or were migrated by a newer sluice. A bad argument or an unknown key in an options object is',
    'an `OptionsError` naming it, thrown before anything is written. The other errors are listed with the',
    'calls that throw them, and [all of them at the end](#errors), each with its stable `code`.',
    '',
    ...sections.map((s) => `- [${s.title}](#${anchor(s.title)})`),
    '- [Errors](#errors)',
  ];
  for (const section of sections) {
    lines.push('', `## ${section.title}`, '');
    lines.push(`Source: [${section.source}](${relative(pageDir, join(root, section.source))}).`);
    if (section.summary) lines.push('', section.summary);
    for (const call of section.calls) {
      lines.push('', `### ${call.path}`, '', '```ts signature', ...call.signatures, '```');
      if (call.deprecated !== null) lines.push('', `**Deprecated.** ${call.deprecated}`);
      if (call.description) lines.push('', call.description);
      for (const t of call.throws) lines.push('', `Throws ${t}`);
    }
  }
  lines.push(
    '',
    '## Errors',
    '',
    "Every error is a `SluiceError` (exported from `'sluice'`) with `name` set and a stable `code`: branch",
    'on `code` or `instanceof`, never on the message.',
    '',
    '| error | code | what it means |',
    '| --- | --- | --- |',
    ...errors.map(
      (e) => `| \`${e.name}\` | ${cell(e.codes.map((c) => `\`${c}\``).join(', '))} | ${cell(e.description)} |`,
    ),
  );
  return `${lines.join('\n')}\n`;
}
