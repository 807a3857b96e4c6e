// Worker thread of conclusion-thread.ts: writes the ends of calls that have a recording with its own
// database connections, so the recording's megabytes (file, base64, JSON, the query's parameters) never
// pass through the event loop that paces the audio of the calls still running.
import { loadConfig } from "../config";
import { createDb, type Db } from "../db/client";
import { describeError } from "../errors";
import { lowerThreadPriority, nameThisThread } from "../lib/thread-priority";
import { writeCallEnd, type CallEnd, type EndRecording } from "./write-call-end";

export type EndJob = { id: number; databaseUrl: string; end: CallEnd; recording: EndRecording };
export type EndResult = { id: number; error: string | null };

declare const self: Worker;

// when many calls end at once this thread is busy for seconds: the audio of the live calls goes first
lowerThreadPriority();
nameThisThread("vas-conclusion");

// a conclusion writer runs one recorded end at a time (the tests run several writers in one process)
const pools = new Map<string, Db>();
const dbOf = (url: string) => {
  let db = pools.get(url);
  if (!db) {
    db = createDb(url, { max: 2, prepare: loadConfig().databasePrepare, name: "conclusions" }).db;
    pools.set(url, db);
  }
  return db;
};

self.onmessage = async ({ data: job }: MessageEvent<EndJob>) => {
  let error: string | null = null;
  try {
    await writeCallEnd(dbOf(job.databaseUrl), job.end, job.recording);
  } catch (failure) {
    error = describeError(failure);
  }
  self.postMessage({ id: job.id, error } satisfies EndResult);
};
