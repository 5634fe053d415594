/**
 * mrtr-state interop example for TypeScript on Node.js: a user of the `mrtr-state` npm package.
 *
 *   node dist/main.js vectors <dir>   check spec/vectors/ (tokens, encrypted tokens, arguments, invalid keys; one line per vector, then "N passed, M failed")
 *   node dist/main.js verify          stdin {"jobs": [...]} -> stdout {"results": [{valid, state | reason}]}
 *   node dist/main.js mint            stdin {"jobs": [...]} -> stdout {"results": [{token}]}
 *   node dist/main.js conformance     the JSON-lines protocol of `mrtr-state conformance`
 *
 * The job formats are those of tests/interop/harness.py. A bad job or bad input ends the program
 * with a message on stderr and exit status 2; a refused token is a result, not an error.
 */

import { dumps, isUnsafeIntegerLiteral, JsonError, parseStrictJson, type Json, type ParsedJson } from "mrtr-state";

import { isObject, JobError, mintJob, verifyJob } from "./jobs.js";
import { conformance } from "./conformance.js";
import { checkVectors } from "./vectors.js";

const USAGE = "usage: node dist/main.js vectors <dir> | verify | mint | conformance   (the others read stdin)";
const MAX_INPUT_DEPTH = 256;

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "vectors" && rest.length === 1 && rest[0] !== undefined) {
    return (await checkVectors(rest[0], (line) => process.stdout.write(line + "\n"))) === 0 ? 0 : 1;
  }
  if (command === "conformance" && rest.length === 0) {
    await conformance();
    return 0;
  }
  if ((command === "verify" || command === "mint") && rest.length === 0) {
    const { jobs, numbers } = await readJobs();
    const results: Json[] = [];
    for (const [index, job] of jobs.entries()) {
      try {
        if (command === "verify") {
          results.push(await verifyJob(job));
        } else {
          const unsafe = numbers.filter((n) => n.path[0] === "jobs" && n.path[1] === index && isUnsafeIntegerLiteral(n.text));
          results.push({ token: await mintJob(job, unsafe.map((n) => ({ path: n.path.slice(2), text: n.text }))) });
        }
      } catch (error) {
        if (error instanceof JobError) throw new JobError(`job ${index}: ${error.message}`);
        throw error;
      }
    }
    // dumps: an integral double beyond 2^53 - 1 in a state is written in exponent form, which every
    // reader reads back as the same number.
    process.stdout.write(dumps({ results }) + "\n");
    return 0;
  }
  throw new JobError(USAGE);
}

/** Read `{"jobs": [...]}` from stdin, strictly: a duplicate member must not silently pick a job's value. */
async function readJobs(): Promise<{ jobs: Json[]; numbers: ParsedJson["numbers"] }> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  let parsed: ParsedJson;
  try {
    // Not I-JSON: a request's arguments may hold integers beyond 2^53 (which make them unbindable), and
    // a token to verify may hold anything; a mint job's state is checked in mintJob.
    parsed = parseStrictJson(Buffer.concat(chunks), { maxDepth: MAX_INPUT_DEPTH, iJson: false });
  } catch (error) {
    if (error instanceof JsonError) throw new JobError(`stdin is not strict JSON: ${error.message}`);
    throw error;
  }
  if (!isObject(parsed.value) || !Array.isArray(parsed.value.jobs)) {
    throw new JobError('stdin must be a JSON object {"jobs": [...]}');
  }
  return { jobs: parsed.value.jobs, numbers: parsed.numbers };
}

main(process.argv.slice(2)).then(
  (status) => {
    process.exitCode = status;
  },
  (error: unknown) => {
    if (error instanceof JobError) {
      process.stderr.write(`mrtr-interop: ${error.message}\n`);
    } else {
      process.stderr.write(`mrtr-interop: internal error: ${error instanceof Error ? error.stack : String(error)}\n`);
    }
    process.exitCode = 2;
  },
);
