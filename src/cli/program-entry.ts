// What the build bundles into one file (dist/bin/program.cjs, scripts/bundle-program.mjs): the program
// and the process's io, all main.ts needs to run a command (and a captured io, for the build's own runs).
export { main } from './program.js';
export { capturedIo, processIo } from '../app/io.js';
