import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { it, vi } from 'vitest';
import { runMain } from '../src/cli/_app.js';
import { capture } from './_io.js';
import { FakeOpenAI } from './_openai-server.js';
import { ROOT } from './_shared.js';

it('demo', { timeout: 120000 }, async () => {
  const s = new FakeOpenAI(); s.answerStyle = 'forgetful';
  const url = await s.start();
  const dir = '/tmp/answers-demo';
  mkdirSync(dir, { recursive: true });
  cpSync(join(ROOT, 'scenarios'), join(dir, 'scenarios'), { recursive: true });
  writeFileSync(join(dir, 'study.yaml'), `scenarios: ['scenarios/*.yaml']\npolicies: [full, window-turns, summary, facts, retrieval]\nanswers: true\nupkeep: {mode: record, baseURL: '${url}'}\n`);
  const io = capture();
  vi.stubEnv('SOURCE_DATE_EPOCH', '1700000000');
  const code = await runMain(['run', join(dir, 'study.yaml'), '--out', join(dir, 'out'), '--no-token-cache'], io);
  writeFileSync(join(dir, 'stdout.txt'), `${code}\n${io.stdout}\n${io.stderr}`);
  await s.stop();
});
