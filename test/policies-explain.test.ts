import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { explain } from '../src/cli/explain.js';

const voice = fileURLToPath(new URL('../scenarios/voice-assistant-tasks.yaml', import.meta.url));

async function explainText(policy: string, turn: number): Promise<string> {
  let out = '';
  await explain({ scenario: voice, policy, turn, model: 'gpt-4o-mini', tokenizer: 'auto', seed: 42 }, { out: (t) => (out += t), err: () => {}, isTTY: false });
  return out;
}

describe('explain shows what the policy made', () => {
  it('retrieved memories with their scores', async () => {
    const out = await explainText('retrieval', 13);
    expect(out).toContain('system[retrieved 0.28]');
    expect(out).toContain(
      '#2 retrieved (policy-made, score 0.2801, 23 tokens): Earlier (turn 1, user): Remind me to call the plumber tomorrow at nine.',
    );
    expect(out).toContain('upkeep before this call: embed on text-embedding-3-small, 12 in, 0 out');
  });

  it('the summary text in full, and the summarization the user waited for', async () => {
    const out = await explainText('summary-buffer', 13);
    expect(out).toMatch(/#2 summary \(policy-made, 204 tokens\): Summary of the conversation so far \(turns 1-8\)\. Known: task_id: T-481; plumber_phone: 98450 12345\./);
    expect(out).toContain('upkeep before this call: summary on gpt-4o-mini, 386 in, 200 out');
    expect(await explainText('summary-buffer', 12)).not.toContain('upkeep before this call');
  });

  it('the fact sheet', async () => {
    expect(await explainText('facts', 13)).toContain('#2 facts (policy-made, 23 tokens): Known facts: task_id: T-481; plumber_phone: 98450 12345');
  });
});
