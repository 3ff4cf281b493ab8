import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { type ChromiumSources, findChromium } from './findChromium.ts';

const SYSTEM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

/** Sources where only the paths in `executable` exist, and the package gives `packaged` (or fails). */
function sources(o: { env?: string; executable?: string[]; packaged?: string }): ChromiumSources & {
  packagedCalls: number;
} {
  const s = {
    env: o.env,
    systemPaths: SYSTEM,
    packagedCalls: 0,
    isExecutable: (path: string) => (o.executable ?? []).includes(path),
    async packaged() {
      s.packagedCalls++;
      if (o.packaged === undefined) throw new Error('@sparticuz/chromium is not installed');
      return { path: o.packaged, env: { LD_LIBRARY_PATH: '/tmp/pkg/lib' } };
    },
  };
  return s;
}

describe('findChromium: SLUICE_CHROMIUM, then the system, then the npm package', () => {
  it('SLUICE_CHROMIUM wins over a system Chromium and the package', async () => {
    const s = sources({ env: '/opt/chrome', executable: ['/opt/chrome', ...SYSTEM], packaged: '/tmp/pkg/chromium' });
    expect(await findChromium(s)).toEqual({ path: '/opt/chrome', source: 'SLUICE_CHROMIUM' });
    expect(s.packagedCalls).toBe(0);
  });

  it('a SLUICE_CHROMIUM that is not executable is an error, not a fall-back', async () => {
    const s = sources({ env: '/opt/typo', executable: SYSTEM, packaged: '/tmp/pkg/chromium' });
    await expect(findChromium(s)).rejects.toThrow('SLUICE_CHROMIUM=/opt/typo is not an executable file');
  });

  it('without SLUICE_CHROMIUM, the system Chromium (first path that exists) before the package', async () => {
    const s = sources({ executable: ['/usr/bin/chromium-browser'], packaged: '/tmp/pkg/chromium' });
    expect(await findChromium(s)).toEqual({
      path: '/usr/bin/chromium-browser',
      source: '/usr/bin/chromium-browser',
    });
    expect(s.packagedCalls).toBe(0);
  });

  it('without either, the npm package’s Chromium', async () => {
    const s = sources({ packaged: '/tmp/pkg/chromium' });
    expect(await findChromium(s)).toEqual({
      path: '/tmp/pkg/chromium',
      source: '@sparticuz/chromium',
      env: { LD_LIBRARY_PATH: '/tmp/pkg/lib' },
    });
  });

  it('with none, one error names all three and why the package gave none', async () => {
    const error = (await findChromium(sources({})).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain('SLUICE_CHROMIUM is not set');
    expect(error.message).toContain('/usr/bin/chromium, /usr/bin/chromium-browser');
    expect(error.message).toContain(
      '@sparticuz/chromium devDependency gave none (@sparticuz/chromium is not installed)',
    );
    expect(error.message).toContain('npm ci');
  });

  it('on this machine, the one it finds runs, with its own libraries where it brings them', async () => {
    const found = await findChromium();
    const env = { ...process.env, ...found.env };
    expect(execFileSync(found.path, ['--version'], { encoding: 'utf8', env })).toMatch(/Chromium \d+/);
    if (found.source === '@sparticuz/chromium')
      expect(execFileSync('ldd', [found.path], { encoding: 'utf8', env })).toContain(
        `libnss3.so => ${found.env?.LD_LIBRARY_PATH}/libnss3.so`,
      );
  });
});
