/**
 * The Chromium that the browser tests (browser.ts) and the dashboard bench (bench/browserLoad.ts)
 * drive, and how sluice starts it. No vitest import: the bench runs outside vitest.
 */
import { execFile, execFileSync } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { brotliDecompressSync } from 'node:zlib';

/**
 * How sluice starts the Chromium it found, for playwright-core's launch/launchPersistentContext:
 * headless, no sandbox (CI runs as root), no GPU, no QUIC, no background traffic to Google, and
 * the en-US locale (under LANG=C the packaged Chromium reports the language `en-US@posix`, which
 * Intl refuses, and uPlot throws). @sparticuz/chromium recommends flags for AWS Lambda
 * (`--single-process`, `--no-zygote`, `--disable-web-security`, …); its binary needs none of them
 * here, and the dashboard tests need web security on (same-origin rules, CSRF) and the browser's
 * usual processes.
 */
export function chromiumLaunchOptions(found: FoundChromium): {
  executablePath: string;
  headless: true;
  args: string[];
  locale: string;
  env?: NodeJS.ProcessEnv;
} {
  return {
    executablePath: found.path,
    ...(found.env ? { env: { ...process.env, ...found.env } } : {}),
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    locale: 'en-US',
  };
}

/** Where Debian (`apt-get install chromium`) and Ubuntu put the system's Chromium. */
export const SYSTEM_CHROMIUM: readonly string[] = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** The places findChromium looks, in its order. Tests replace them. */
export interface ChromiumSources {
  /** SLUICE_CHROMIUM: a Chromium binary chosen by hand. */
  readonly env: string | undefined;
  /** The system's Chromium, first match wins. */
  readonly systemPaths: readonly string[];
  isExecutable(path: string): boolean;
  /** The Chromium inside the @sparticuz/chromium devDependency, decompressed; throws when there is none. */
  packaged(): Promise<Omit<FoundChromium, 'source'>>;
}

export interface FoundChromium {
  readonly path: string;
  /** Which source it came from, for messages: `SLUICE_CHROMIUM`, a system path, or `@sparticuz/chromium`. */
  readonly source: string;
  /** Variables the browser process needs on top of ours (the packaged one: its own libraries). */
  readonly env?: Readonly<Record<string, string>>;
}

const LOCAL: ChromiumSources = {
  env: process.env.SLUICE_CHROMIUM || undefined,
  systemPaths: SYSTEM_CHROMIUM,
  isExecutable,
  packaged: packagedChromium,
};

/**
 * The browser to drive, in this order: SLUICE_CHROMIUM (when set it must work: a typo is an error,
 * not a reason to take another browser); else the system's Chromium; else the one shipped in the
 * @sparticuz/chromium devDependency, so `npm ci && npm test` needs no apt-get. When none works, one
 * error names all three and how to get one.
 */
export async function findChromium(sources: ChromiumSources = LOCAL): Promise<FoundChromium> {
  if (sources.env !== undefined) {
    if (sources.isExecutable(sources.env)) return { path: sources.env, source: 'SLUICE_CHROMIUM' };
    throw new Error(`SLUICE_CHROMIUM=${sources.env} is not an executable file: unset it or name a Chromium binary`);
  }
  const system = sources.systemPaths.find((path) => sources.isExecutable(path));
  if (system) return { path: system, source: system };
  let packagedFailure: string;
  try {
    return { ...(await sources.packaged()), source: '@sparticuz/chromium' };
  } catch (error) {
    packagedFailure = (error as Error).message;
  }
  throw new Error(
    `no Chromium for the browser tests: SLUICE_CHROMIUM is not set; no system Chromium ` +
      `(${sources.systemPaths.join(', ')}); and the @sparticuz/chromium devDependency gave none ` +
      `(${packagedFailure}). Run npm ci (it installs @sparticuz/chromium), apt-get install chromium, ` +
      'or set SLUICE_CHROMIUM to a Chromium binary',
  );
}

/** A file we may execute. */
function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Runs the package's own decompression, which writes into os.tmpdir(); the child's TMPDIR is a private folder. */
const DECOMPRESS = 'require(process.argv[1]).executablePath().then((path) => process.stdout.write(path))';
const DECOMPRESS_TIMEOUT_MS = 120_000;

/**
 * The Chromium of @sparticuz/chromium, decompressed once per package version into
 * `<tmpdir>/sluice-packaged-chromium-<version>/` (about 200 MB; kept for later runs), with the NSS
 * libraries it links (libnss3, libnspr4: not on a machine with only MariaDB) from the package's
 * al2023 bundle, which it gets through LD_LIBRARY_PATH. The package writes straight into
 * os.tmpdir() and reuses whatever it finds there, so a half-written binary (a run killed midway,
 * two test files at once) would be taken as whole: here it decompresses into a private folder
 * that is renamed into place only once complete, and the first rename wins.
 */
async function packagedChromium(): Promise<Omit<FoundChromium, 'source'>> {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve('@sparticuz/chromium');
  } catch {
    throw new Error('@sparticuz/chromium is not installed');
  }
  const root = resolve(dirname(entry), '../..');
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const home = join(tmpdir(), `sluice-packaged-chromium-${version}`);
  const binary = join(home, 'chromium');
  const libraries = join(home, 'al2023', 'lib');
  const found = { path: binary, env: { LD_LIBRARY_PATH: libraries } };
  const complete = () => isExecutable(binary) && existsSync(join(libraries, 'libnss3.so'));
  if (complete()) return found;
  const staging = mkdtempSync(`${home}.partial-`);
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', DECOMPRESS, entry], {
      env: { ...process.env, TMPDIR: staging },
      timeout: DECOMPRESS_TIMEOUT_MS,
    });
    if (stdout !== join(staging, 'chromium')) throw new Error(`it decompressed to ${stdout}, not into ${staging}`);
    mkdirSync(join(staging, 'al2023'));
    execFileSync('tar', ['-x', '-C', join(staging, 'al2023')], {
      input: brotliDecompressSync(readFileSync(join(root, 'bin', 'al2023.tar.br'))),
    });
    try {
      renameSync(staging, home);
    } catch (error) {
      // Another process renamed its copy first (ENOTEMPTY/EEXIST): use that one.
      if (!complete()) throw new Error(`${home} is incomplete: delete it`, { cause: error });
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return found;
}
