'use strict';
// One Node side of bench/workers.sh: loads the jobs with the side's own bulk
// insert, or drains them with the side's worker and prints the run's
// figures.  Every handler does nothing but count.
//
//   queue     our Node Worker (pg-lease-queue): concurrency and batchSize
//             CONCURRENCY, the other options at their defaults
//   loop      our Node client without the Worker: deleteAndGet of
//             CONCURRENCY in a loop, the messages handled one by one
//   pgloop    the same loop on node-postgres alone, without our client:
//             the statement our client sends, named and prepared, the rows
//             as the driver gives them
//   pgboss    pg-boss: work() with localConcurrency PGBOSS_WORKERS and
//             batchSize CONCURRENCY / PGBOSS_WORKERS, burstWhenBatchFull
//   graphile  graphile-worker: concurrentJobs CONCURRENCY with the batching
//             its performance page recommends (localQueue.size
//             CONCURRENCY + 1, completeJobBatchDelay and failJobBatchDelay
//             250 ms), maxPoolSize max(10, CONCURRENCY + 2)
//
// The run is timed from the call that starts the worker (its first fetch)
// to the moment the last job's completion is committed: our Worker counts
// a job processed once the call that deleted it returned, the loop ends
// with the call that deleted the last batch; pg-boss and
// graphile-worker are asked, once every handler has returned, until the
// database holds no job left to complete (those queries are counted, as
// "polls", for workers.sh to take out of the commits).
//
// Usage: node workers_run.js load|run SIDE DSN JOBS CONCURRENCY
// Prints for run one line: the run's seconds, the jobs handled, the polls,
// the CPU time in µs (user and system) of this process over the run, and
// the worker's options as JSON.
const pg = require('pg');

const [mode, side, dsn, jobsArg, concurrencyArg] = process.argv.slice(2);
const jobs = Number(jobsArg);
const concurrency = Number(concurrencyArg);
const pgbossWorkers = Number(process.env.PGBOSS_WORKERS || 1);
const CHUNK = 1000;   // jobs per bulk insert

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const body = (i) => ({ n: i });

// chunks(make): the jobs 0..jobs-1 in arrays of CHUNK, each job made by make(i)
function* chunks(make) {
  for (let from = 0; from < jobs; from += CHUNK) {
    const chunk = [];
    for (let i = from; i < Math.min(from + CHUNK, jobs); i += 1) chunk.push(make(i));
    yield chunk;
  }
}

// Our client's bulk insert, for the Worker's side and the loop's.
async function putJobs(client) {
  for (const chunk of chunks((i) => JSON.stringify(body(i)))) await client.putBatch('bench', chunk);
}

// A side that drains the jobs in a plain loop: step(done) deletes the
// messages done with and gets the next ones, returning { deleted, messages };
// the messages are handled one after the other.  client puts the jobs in.
function loopSide(client, options, prepare, stop, step) {
  let deleted = 0;
  let finished;
  return {
    load: () => putJobs(client),
    prepare,
    start: (handler) => {
      finished = (async () => {
        let done = [];
        for (;;) {
          const got = await step(done);
          deleted += got.deleted;
          if (got.messages.length === 0) return;
          for (const message of got.messages) await handler(message);
          done = got.messages;
        }
      })();
      // a failed call ends the run (the handler would wait for its jobs forever)
      finished.catch((err) => {
        console.error(err);
        process.exit(1);
      });
    },
    done: async () => {
      await finished;
      if (deleted !== jobs) throw new Error(`the loop deleted ${deleted} of ${jobs} jobs`);
      return true;
    },
    stop,
    settings: options,
  };
}

// One per side: prepare() sets up what the side needs before the clock
// starts, load() puts the jobs in, start(handler) starts the worker,
// done(poll) says whether every completion is committed (poll runs a query
// on a connection of the driver's own), stop() ends the worker and closes
// the side's connections.
const sides = {
  queue: () => {
    const { Client, Worker } = require('pg-lease-queue');
    const client = new Client(dsn);
    const options = { concurrency, batchSize: concurrency };
    let worker;
    return {
      load: () => putJobs(client),
      // the schema looked up before the clock starts, as the other sides
      // have set up theirs
      prepare: () => client.stats('bench'),
      start: (handler) => {
        worker = new Worker(client, 'bench', handler, options);
        worker.start();
      },
      done: async () => worker.metrics.processed >= jobs,
      stop: async () => {
        if (worker) await worker.stop();
        await client.close();
      },
      settings: options,
    };
  },
  // our client's deleteAndGet in a loop, without the Worker: each call
  // deletes the batch the previous one got, whose messages were handled
  // one after the other; what the Worker adds to the same calls is the
  // difference between the two sides
  loop: () => {
    const { Client } = require('pg-lease-queue');
    const client = new Client(dsn);
    const options = { maxMessages: concurrency, visibilityTimeout: 30, wait: 0 };
    return loopSide(client, options, () => client.stats('bench'), () => client.close(), async (done) => {
      const got = await client.deleteAndGet('bench', done, options);
      return { deleted: got.deleted.filter((result) => result.status === 'deleted').length, messages: got.messages };
    });
  },
  // the same loop on node-postgres alone: what our client adds to its
  // driver is the difference
  pgloop: () => {
    const { Client } = require('pg-lease-queue');
    const client = new Client(dsn);
    const db = new pg.Client({ connectionString: dsn });
    const text = 'SELECT * FROM queue_delete_and_get($1, $2::bigint[], $3::uuid[], $4::int, '
      + "pg_catalog.make_interval(secs => $5::float8), '0', false) "
      + "WITH ORDINALITY AS r WHERE r.status OPERATOR(pg_catalog.<>) 'deleted'";
    const options = { maxMessages: concurrency, visibilityTimeout: 30, wait: 0 };
    const stop = async () => {
      await db.end();
      await client.close();
    };
    return loopSide(client, options, () => db.connect(), stop, async (done) => {
      const { rows } = await db.query({
        name: 'delete_and_get',
        text,
        values: ['bench', done.map((row) => row.message_id), done.map((row) => row.pop_receipt), concurrency, 30],
      });
      const claimed = rows.filter((row) => row.status === 'claimed');
      // the rows left are the claims and the deletes that failed
      return { deleted: done.length - (rows.length - claimed.length), messages: claimed };
    });
  },
  pgboss: () => {
    let boss;
    const options = { localConcurrency: pgbossWorkers, batchSize: Math.ceil(concurrency / pgbossWorkers), burstWhenBatchFull: true };
    return {
      prepare: async () => {
        const { PgBoss } = await import('pg-boss');
        boss = new PgBoss({ connectionString: dsn });
        boss.on('error', (err) => console.error(err));
        await boss.start();
        if (!(await boss.getQueue('bench'))) await boss.createQueue('bench');
      },
      load: async () => {
        for (const chunk of chunks((i) => ({ data: body(i) }))) await boss.insert('bench', chunk);
      },
      start: (handler) => boss.work('bench', options, async (batch) => {
        for (const job of batch) await handler(job);
      }),
      done: async (poll) => Number(await poll("SELECT count(*) FROM pgboss.job WHERE name = 'bench' AND state <> 'completed'")) === 0,
      stop: () => boss.stop({ graceful: true, wait: true }),
      settings: options,
    };
  },
  graphile: () => {
    const { run, makeWorkerUtils, Logger } = require('graphile-worker');
    const quiet = new Logger(() => () => {});
    const worker = {
      connectionString: dsn,
      concurrentJobs: concurrency,
      maxPoolSize: Math.max(10, concurrency + 2),
      localQueue: { size: concurrency + 1 },
      completeJobBatchDelay: 250,
      failJobBatchDelay: 250,
      logger: quiet,
    };
    let runner;
    let utils;
    return {
      prepare: async () => {
        utils = await makeWorkerUtils({ connectionString: dsn, logger: quiet });
        await utils.migrate();
      },
      load: async () => {
        for (const chunk of chunks((i) => ({ identifier: 'bench', payload: body(i) }))) await utils.addJobs(chunk);
      },
      start: async (handler) => {
        runner = await run({ noHandleSignals: true, taskList: { bench: handler }, preset: { worker } });
      },
      done: async (poll) => Number(await poll('SELECT count(*) FROM graphile_worker._private_jobs')) === 0,
      stop: async () => {
        if (runner) await runner.stop();
        await utils.release();
      },
      settings: { ...worker, connectionString: undefined, logger: undefined },
    };
  },
};

async function main() {
  const s = sides[side]();
  await s.prepare();
  if (mode === 'load') {
    await s.load();
    await s.stop();
    return;
  }
  const watcher = new pg.Client({ connectionString: dsn });
  await watcher.connect();
  let polls = 0;
  const poll = async (sql) => {
    polls += 1;
    return (await watcher.query(sql)).rows[0].count;
  };
  let handled = 0;
  let allHandled;
  const handledAll = new Promise((resolve) => { allHandled = resolve; });
  const handler = async () => {
    handled += 1;
    if (handled === jobs) allHandled();
  };
  const cpu = process.cpuUsage();
  const started = performance.now();
  await s.start(handler);
  await handledAll;
  while (!(await s.done(poll))) await sleep(1);
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await s.stop();
  await watcher.end();
  console.log(seconds, handled, polls, used.user + used.system, JSON.stringify(s.settings));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
