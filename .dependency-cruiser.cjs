/**
 * ctxsim's layers, from the ground up: a folder of src/ may import only the
 * folders below it (and the ground files types.ts and errors.ts). Above them
 * all, the package's entry points (src/index.ts and src/api/) re-export the
 * layers, and nothing imports them. Checked in CI by `npm run check`
 * (depcruise src).
 */
const LAYERS = ['store', 'text', 'tokens', 'message-rules', 'pricing', 'scenario', 'upkeep', 'policies', 'records', 'engine', 'gate', 'report', 'output', 'recording', 'study', 'cli'];

const above = (i) => LAYERS.slice(i + 1).join('|');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...LAYERS.slice(0, -1).map((layer, i) => ({
      name: `${layer}-imports-only-below`,
      comment: `src/${layer}/ is below ${LAYERS.slice(i + 1).join(', ')}: it may not import them`,
      severity: 'error',
      from: { path: `^src/${layer}/` },
      to: { path: `^src/(${above(i)})/` },
    })),
    {
      name: 'ground-imports-nothing',
      comment: 'src/types.ts, src/errors.ts and src/process.ts are the ground floor: they import no folder of src/',
      severity: 'error',
      from: { path: '^src/(types|errors|process)\\.ts$' },
      to: { path: '^src/[^/]+/' },
    },
    {
      name: 'library-never-imports-cli',
      comment: 'the library (everything but src/cli/) never imports the command line',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'entry-points-imported-by-none',
      comment: 'src/index.ts and src/api/ are the package entry points (the root and its sub-paths): no file of src/ imports them',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/(index\\.ts$|api/)' },
    },
    {
      name: 'no-foreign-private',
      comment: 'a file named _x.ts is private to its folder',
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/.*/_[^/]+$', pathNot: '^src/$1/' },
    },
    {
      name: 'engine-knows-no-encoding',
      comment: 'the engine returns records: their text in the record files and the report digest are the sinks’ (a worker thread runs the encoder a sink names, src/output/record-encoder.ts)',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: '^src/records/(encode|digest)\\.ts$' },
    },
    {
      name: 'no-circular',
      comment: 'no import cycles, type-only imports included',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js', '.json'] },
  },
};
