// Runs an ONNX model N times in onnxruntime-node, each run between the
// edgemem inference markers, so `edgemem record -- node run_model.js ...`
// sees what a session keeps and what each run adds.
//
// usage: node run_model.js MODEL N --inputs WIDTH [--arena on|off] [--release] [--sessions K]
//   NODE_PATH must reach onnxruntime-node and edgemem_marker.node (run.sh sets it).
//   --arena    the session's enableCpuMemArena (ORT's default: on)
//   --release  release the session before exit, so what is left live is what
//              ORT keeps beyond a session (its environment, kernel registries)
//   --sessions K  create, run N times and release K sessions in turn (with
//              --release): what stays once per process stays once, what a
//              session leaks stays K times
'use strict';

const ort = require('onnxruntime-node');
const marker = require('edgemem_marker');

function parse(argv) {
  const usage = 'usage: node run_model.js MODEL N --inputs WIDTH [--arena on|off] [--release] [--sessions K]';
  const options = {model: argv[0], runs: Number(argv[1]), inputs: 0, arena: true, release: false, sessions: 1};
  for (let i = 2; i < argv.length; ++i) {
    if (argv[i] === '--inputs') options.inputs = Number(argv[++i]);
    else if (argv[i] === '--arena' && ['on', 'off'].includes(argv[i + 1])) options.arena = argv[++i] === 'on';
    else if (argv[i] === '--release') options.release = true;
    else if (argv[i] === '--sessions') options.sessions = Number(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]}; ${usage}`);
  }
  if (!options.model || !Number.isInteger(options.runs) || options.runs < 1 ||
      !Number.isInteger(options.inputs) || options.inputs < 1 ||
      !Number.isInteger(options.sessions) || options.sessions < 1 || (options.sessions > 1 && !options.release)) {
    throw new Error(usage);
  }
  return options;
}

async function main() {
  const options = parse(process.argv.slice(2));
  let checksum = 0;
  let index = 0;
  for (let k = 0; k < options.sessions; ++k) {
    // One intra-op thread and sequential execution: ORT's thread pool would
    // otherwise add a thread per core, and the recording would differ by machine.
    const session = await ort.InferenceSession.create(options.model, {
      executionProviders: ['cpu'],
      enableCpuMemArena: options.arena,
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
    });
    const input = new ort.Tensor('float32', new Float32Array(options.inputs).fill(0.25), [1, options.inputs]);
    for (let i = 0; i < options.runs; ++i, ++index) {
      marker.begin(index);
      const outputs = await session.run({[session.inputNames[0]]: input});
      marker.end(index);
      checksum += outputs[session.outputNames[0]].data[0];
    }
    if (options.release) await session.release();
  }
  console.log(JSON.stringify({
    model: options.model, runs: options.runs, arena: options.arena, released: options.release,
    sessions: options.sessions,
    recorded: marker.recording(), checksum,
  }));
}

main().catch((error) => {
  console.error(`run_model.js: ${error.message}`);
  process.exit(2);
});
