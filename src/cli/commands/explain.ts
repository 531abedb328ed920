import type { Argv } from 'yargs';
import { wholeNumberOption, type Command } from '../_command.js';
import type { IO } from '../_io.js';
import type { ExplainFlags } from '../explain.js';

export function explainCommand(io: IO): Command<ExplainFlags> {
  return {
    command: 'explain [file]',
    describe: 'print exactly what a policy sends at one turn, with token counts, each call\'s cost and the probes\' outcome',
    examples: [
      ['ctxsim explain scenarios/noah-amnesia.yaml --policy window-turns:turns=2 --turn 5', 'what a two-exchange window sends at turn 5, with token counts'],
      ['ctxsim explain study.yaml --scenario support-0003 --policy summary --turn 8', 'the same turn as `ctxsim run study.yaml` replayed it: the study\'s model, seed, prices and caching'],
    ],
    builder: async (y: Argv) => {
      const { POLICY_LIMIT_OPTIONS, settingOption } = await import('../_study-options.js');
      return y
        .positional('file', { type: 'string', describe: 'scenario file, or study file (then the turn is replayed as ctxsim run replays the study); default: ./ctxsim.yaml or ./study.yaml, else the built-in default study' })
        .option('scenario', { type: 'string', describe: 'with a study file: the id of the conversation (needed when the study has several)' })
        .option('policy', settingOption('policy', { one: true, demandOption: true, describe: 'policy spec, e.g. window-turns:turns=3, or a policy module: ./policies/keep-edges.mjs:keep=1' }))
        .option('turn', wholeNumberOption('turn', { demandOption: true, describe: 'turn number (from 1)' }))
        .option('model', settingOption('model', { one: true, describe: 'chat model: prices, context window, tokenizer (with a study file: one of its models)', defaultDescription: 'gpt-4o-mini, or the study\'s first' }))
        .option('tokenizer', settingOption('tokenizer', { describe: (own) => `${own} (over the study's, as on run)`, defaultDescription: 'auto, or the study\'s' }))
        .option('seed', settingOption('seed', { describe: 'random seed (over the study\'s, as on run)', defaultDescription: '42, or the study\'s' }))
        .option('cold-start', settingOption('cold-start', { describe: (own) => `${own} (over the study's, as on run)` }))
        .option('upkeep', settingOption('upkeep', { describe: 'simulate, or replay the upkeep cassette (a study recorded with ctxsim run --upkeep record); explain sends nothing' }))
        .option('cassette', settingOption('cassette', { describe: 'with --upkeep replay: the upkeep cassette to replay' }))
        .options(POLICY_LIMIT_OPTIONS);
    },
    handler: async (argv: ExplainFlags) => (await import('../explain.js')).explain(argv, io),
  };
}
