import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { explain } from '../src/cli/explain.js';

const voice = fileURLToPath(new URL('../scenarios/voice-assistant-tasks.yaml', import.meta.url));

async function explainText(policy: string, turn: number, tokenizer = 'auto', file = voice): Promise<string> {
  let out = '';
  await explain({ file, policy, turn, model: 'gpt-4o-mini', tokenizer, seed: 42 }, { out: (t) => (out += t), err: () => {}, isTTY: false });
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

  // The summary and the sheet are counted with chars4 (tokens = floor(characters / 4), no chat overhead), so their counts can be checked by hand.
  it('the summary text in full, and the summarization the user waited for (chars4)', async () => {
    const out = await explainText('summary-buffer', 13, 'chars4');
    // The fold before turn 13 (turns 5-8 into the summary of turns 1-4) writes the header (47 chars → 11), then the statements of
    // turns 1-8 that fit, in the order made: the old summary's and the new ones (the create_task result of turn 5, T-482, replaces
    // turn 1's, T-481, as a restated fact: same kinds of span, most words shared), the least salient dropped first; then padding
    // while it fits. 766 chars → 191.
    const summary =
      'Summary of the conversation so far (turns 1-8). ' +
      'Remind the user to call the plumber tomorrow at nine. The assistant will remind the user to call the plumber tomorrow at 9 am. ' +
      'Make the task they created high priority. The assistant called update_task with T-481. ' +
      'update_task returned: {"task_id":"T-481","priority":"high","updated":true} The plumber is Arjun, his number is 98450 12345. ' +
      'The assistant called create_memo with 98450 12345. create_memo returned: {"memo_id":"M-77","saved":true} ' +
      'The assistant called create_task with 18:00. create_task returned: {"task_id":"T-482","title":"Buy bread","due":"2025-03-11T18:00"} ' +
      'The conversation stayed polite throughout. Nothing else needed a follow-up. The user gave no further details. No other requests were left open.';
    expect(summary.length).toBe(766);
    expect(out).toContain(`#2 summary (policy-made, 191 tokens): ${summary}\n`);
    // In: the template (188 chars → 47) + the old summary (193, as turn 9's call lists it) + turns 5-8 as listed there
    // (10 + 13 + 16 + 8, 7 + 6, 3 + 4, 11 + 9 = 87) = 327; out: the 191 above.
    expect((await explainText('summary-buffer', 9, 'chars4')).match(/ 2 {2}system\[summary\] +- +(\d+) /)?.[1]).toBe('193');
    expect(out).toContain('upkeep before this call: summary on gpt-4o-mini, 327 in, 191 out');
    expect(await explainText('summary-buffer', 12, 'chars4')).not.toContain('upkeep before this call');
    // With the default tokenizer (o200k_base) the same fold costs 385 in, 195 out, and the summary is sent as 199 tokens:
    // its 195 of text and a system message's overhead (3 per message + 1 for "system").
    const o200k = await explainText('summary-buffer', 13);
    expect(o200k).toContain('upkeep before this call: summary on gpt-4o-mini, 385 in, 195 out');
    expect(o200k).toContain(`#2 summary (policy-made, 199 tokens): ${summary}\n`);
  });

  it('the fact sheet (chars4)', async () => {
    // Every statement the extractions of turns 1-12 found (recall 1), in the order first found, a restated one in place of the
    // earlier (the second create_task call and result, the second create_memo result); 652 characters → 163 tokens, within 500.
    const sheet =
      'Known facts: Remind the user to call the plumber tomorrow at nine. The assistant will remind the user to call the plumber tomorrow at 9 am. ' +
      'Make the task they created high priority. The assistant called update_task with T-481. ' +
      'update_task returned: {"task_id":"T-481","priority":"high","updated":true} The plumber is Arjun, his number is 98450 12345. ' +
      'The assistant called create_memo with 98450 12345. The assistant called create_task with 18:00. ' +
      'create_task returned: {"task_id":"T-482","title":"Buy bread","due":"2025-03-11T18:00"} The assistant called create_memo. ' +
      'create_memo returned: {"memo_id":"M-78","saved":true} A dentist appointment at 4 pm.';
    expect(sheet.length).toBe(652);
    const out = await explainText('facts', 13, 'chars4');
    expect(out).toContain(`#2 facts (policy-made, 163 tokens): ${sheet}\n`);
    expect(out).toContain('upkeep after the calls: extract on gpt-4o-mini, 102 in, 43 out');
  });

  // gpt-4o-mini: $0.15/M input, $0.60/M output (nothing cached below 1,024 tokens); text-embedding-3-small: $0.02/M.
  it('each call’s cost, the upkeep’s, the turn’s, and the probe’s outcome', async () => {
    const out = await explainText('retrieval', 13);
    // 259 × 0.15 + 19 × 0.60 = 50.25 µ$; 311 × 0.15 + 10 × 0.60 = 52.65 µ$; embeddings of 12 and 54 tokens: 0.24 and 1.08 µ$.
    expect(out).toContain('  total                            259  12 messages\n  cost on gpt-4o-mini: 259 uncached, 0 cache reads, 0 cache writes, 19 output tokens: $0.00005025\n');
    expect(out).toContain('  cost on gpt-4o-mini: 311 uncached, 0 cache reads, 0 cache writes, 10 output tokens: $0.00005265\n');
    expect(out).toContain('  upkeep before this call: embed on text-embedding-3-small, 12 in, 0 out: $0.00000024\n');
    expect(out).toContain('\n  upkeep after the calls: embed on text-embedding-3-small, 54 in, 0 out: $0.00000108\n');
    expect(out).toContain('\nturn 13 cost: $0.00010422 (calls $0.00010290, upkeep $0.00000132)\nprobe task_id: retained (value "T-481" in call 1\'s prompt, from the retrieved memories)\n');
    // The summary the user waited for: 385 × 0.15 + 195 × 0.60 = 174.75 µ$.
    expect(await explainText('summary-buffer', 13)).toContain('upkeep before this call: summary on gpt-4o-mini, 385 in, 195 out: $0.00017475\n');
    // The correction at turn 5 is outside a ten-turn window at turn 27; the old address, in turn 19's tool result, is not.
    const email = fileURLToPath(new URL('../scenarios/support-email-correction.yaml', import.meta.url));
    expect(await explainText('window-turns:turns=10', 27, 'auto', email)).toContain('\nprobe email: stale (only an older value, "t.nowak@oldmail.example", in call 1\'s prompt, from the window)\n');
    expect(await explainText('full', 27, 'auto', email)).toContain('\nprobe email: retained (value "nowak.trails@brightpost.example" in call 1\'s prompt, from the window)\n');
  });
});
