/** One entry point for every benchmark loader: file text in (a path is read by the caller), dataset out. */
import { badRequest } from "../core/errors";
import { parseLocomo } from "./locomo";
import { parseLongMemEval } from "./longmemeval";
import { generateSynthexBench, SYNTHEXBENCH_SIZES } from "./synthexbench";
import { BenchmarkFileError, BENCHMARKS, type Benchmark, type LoadResult } from "./types";

/** At most this much benchmark text per import (the full LoCoMo file is 2.8 MB). */
export const MAX_DATASET_CHARS = 300 * 1024 * 1024;

export interface DatasetSource {
  benchmark: Benchmark;
  /** The file's text (LoCoMo, LongMemEval). */
  text?: string;
  /** The file name, shown in errors and on the dataset. */
  name?: string;
  /** SynthexBench: generator seed and size. */
  seed?: number;
  size?: string;
}

export function loadDataset(input: DatasetSource): LoadResult {
  if (!(BENCHMARKS as readonly string[]).includes(input.benchmark)) throw badRequest(`Unknown benchmark "${input.benchmark}": use ${BENCHMARKS.join(", ")}.`);
  const name = input.name ?? `${input.benchmark}.json`;
  if (input.text !== undefined && input.text.length > MAX_DATASET_CHARS) throw badRequest(`${name}: the file is larger than ${MAX_DATASET_CHARS / 1024 / 1024} MB.`);
  try {
    switch (input.benchmark) {
      case "locomo":
        if (input.text === undefined) throw badRequest("LoCoMo needs its file: pass --data <locomo10.json>.");
        return parseLocomo(input.text, name);
      case "longmemeval":
        if (input.text === undefined) throw badRequest("LongMemEval needs its file: pass --data <longmemeval_oracle.json>.");
        return parseLongMemEval(input.text, name);
      case "synthexbench":
        if (input.size && !(input.size in SYNTHEXBENCH_SIZES)) throw badRequest(`Unknown SynthexBench size "${input.size}": use ${Object.keys(SYNTHEXBENCH_SIZES).join(", ")}.`);
        if (input.seed !== undefined && !Number.isInteger(input.seed)) throw badRequest("The SynthexBench seed is a whole number.");
        return generateSynthexBench({ seed: input.seed, size: input.size });
    }
  } catch (err) {
    if (err instanceof BenchmarkFileError) throw badRequest(err.message);
    throw err;
  }
}
