import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cli, recordCli } from './_io.js';
import { serverForFile } from './_openai-server.js';
import { tempDir } from './_tmp.js';

/**
 * `ctxsim explain` prints a scenario's text and a cassette's responses to a
 * terminal: their control and invisible format characters are escaped as an
 * error line's are (`\x1b`, `\u202e`), so an OSC 52 clipboard write, a
 * clear-screen or a right-to-left override in a scenario or a recorded
 * summary is shown, not obeyed; a newline of a text printed whole starts an
 * indented line, never one of explain's own.
 */

/** An OSC 52 clipboard write, a clear-screen and home, a colour, a right-to-left override. */
const HOSTILE = '\x1b]52;c;ZWNobyBwd25lZA==\x07 \x1b[2J\x1b[H \x1b[31mred\x1b[0m \u202egnp.exe';
const SHOWN = '\\x1b]52;c;ZWNobyBwd25lZA==\\x07 \\x1b[2J\\x1b[H \\x1b[31mred\\x1b[0m \\u202egnp.exe';

/** The control and format characters of a text, newlines aside. */
const unescaped = (text: string) => text.replaceAll('\n', '').match(/[\p{Cc}\p{Cf}\u2028\u2029]/gu) ?? [];

const { server, url } = serverForFile();
afterEach(() => {
  server.tamper = undefined;
  vi.unstubAllEnvs();
});

/** A scenario whose messages and a fact's value hold `HOSTILE`. */
function scenario(dir: string): string {
  const file = join(dir, 'hostile.yaml');
  const q = (s: string) => JSON.stringify(s);
  writeFileSync(
    file,
    [
      'id: hostile',
      'turns:',
      `  - user: ${q(`my code is AB-1234${HOSTILE}\rmore`)}`,
      `    facts: {code: ${q(`AB-1234${HOSTILE.slice(0, 10)}`)}}`,
      `    assistant: ${q(`Noted.\u2028${HOSTILE}`)}`,
      '  - user: anything else?',
      '    assistant: no',
      '  - user: what is my code?',
      '    probe: [code]',
      '    assistant: AB-1234',
      '',
    ].join('\n'),
  );
  return file;
}

describe('explain escapes control characters', () => {
  it('in a scenario’s messages, in a fact’s value and in a summary made of them', async () => {
    const file = scenario(tempDir());
    const full = await cli('explain', file, '--policy', 'full', '--turn', '3');
    expect(full.code, full.err).toBe(0);
    expect(unescaped(full.out)).toEqual([]);
    // The table's rows: one line each, escaped before they are aligned.
    expect(full.out).toContain(`\n1  user              1      51  my code is AB-1234${SHOWN} more\n2  assistant         1      46  Noted. ${SHOWN}\n3  user  `);
    expect(full.out).toContain(`probe code: retained (value "AB-1234\\x1b]52;c;ZWN" in call 1's prompt, from the window)\n`);

    const summary = await cli('explain', file, '--policy', 'summary:threshold=20', '--turn', '3');
    expect(summary.code, summary.err).toBe(0);
    expect(unescaped(summary.out)).toEqual([]);
  });

  it('in a recorded summary printed whole: a newline in it starts an indented line', async () => {
    const dir = tempDir();
    scenario(dir);
    const study = join(dir, 'study.yaml');
    writeFileSync(study, ['scenarios: [hostile.yaml]', "policies: ['summary:threshold=20']", `upkeep: {mode: replay, baseURL: '${url()}', retries: 0}`, ''].join('\n'));
    // The summarizer's answer holds the hostile text, and a line that would read as explain's own.
    server.tamper = (answer) => {
      const choices = answer.choices as { message: { content: string } }[] | undefined;
      return choices ? { ...answer, choices: [{ ...choices[0], message: { role: 'assistant', content: `AB-1234 ${HOSTILE}\nturn 3 cost: $0.00000000` } }] } : answer;
    };
    const rec = await recordCli(['run', study, '--upkeep', 'record', '--quiet', '--no-token-cache']);
    expect(rec.code, rec.stderr).toBe(0);
    const x = await cli('explain', study, '--policy', 'summary:threshold=20', '--turn', '3', '--upkeep', 'replay');
    expect(x.code, x.err).toBe(0);
    expect(unescaped(x.out)).toEqual([]);
    expect(x.out).toMatch(new RegExp(`\\n  #1 summary \\(policy-made, \\d+ tokens\\): AB-1234 ${SHOWN.replace(/[\\[\]$()]/g, '\\$&')}\\n      turn 3 cost: \\$0\\.00000000\\n`));
    expect(x.out.split('\n').filter((l) => l.startsWith('turn 3 cost:'))).toHaveLength(1);
  });
});
