import type { Argv } from 'yargs';
import { wholeNumberOption, type Command } from '../_command.js';
import type { IO } from '../_io.js';
import type { CheckPolicyFlags } from '../check-policy.js';

export function checkPolicyCommand(io: IO): Command<CheckPolicyFlags> {
  return {
    command: 'check-policy <policy>',
    describe: 'replay scenarios through a policy (a module or a built-in) and list every rule of the policy contract it breaks (exit 1 if any)',
    examples: [
      ['ctxsim check-policy ./policies/keep-edges.mjs', 'the module under the parameter sets derived from its parameters, on the built-in scenarios'],
      ['ctxsim check-policy "./policies/keep-edges.mjs:keep=0|1|5" --scenario "scenarios/*.yaml"', 'those three variants, on your scenarios'],
    ],
    builder: async (y: Argv) => {
      const { POLICY_LIMIT_OPTIONS, settingOption } = await import('../_study-options.js');
      return y
        .positional('policy', { type: 'string', demandOption: true, describe: 'a policy module (./policies/keep-edges.mjs), or a built-in id; with parameters (:keep=1, a sweep keep=0|1) only those variants are checked' })
        .option('scenario', settingOption('scenario', { describe: 'scenario file or glob (repeatable); default: the default study’s scenarios and the contract scenarios of templates/contract/' }))
        .option('seed', settingOption('seed', { default: 42, describe: 'seed of the policy’s random streams' }))
        .option('limit', wholeNumberOption('limit', { default: 100, min: 1, describe: 'stop after this many broken rules' }))
        .options(POLICY_LIMIT_OPTIONS);
    },
    handler: async (argv: CheckPolicyFlags) => (await import('../check-policy.js')).checkPolicy(argv, io),
  };
}
