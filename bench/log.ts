/**
 * Log benchmark: send commands produced and consumed through the registry serde (Avro encode on
 * produce, decode on consume) against raw kafkajs on byte buffers of the same sizes, on the same
 * broker, in the same run. Prints records/s of each path and the ratio serde/raw.
 *
 * In a round, the two paths produce batch for batch in turn, so that the machine's other load (the
 * broker shares its two cores) falls on both alike; each round gives a ratio, and the median
 * round's is printed with all of them. It runs with the roles' V8 flags (`ROLE_FLAGS`).
 *
 *   npm run bench:log            (BENCH_RECORDS=100000, BENCH_ROUNDS=5)
 */
import { randomBytes } from 'node:crypto';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { pino } from 'pino';
import { loadSchemaFiles } from '../schemas/load.js';
import { AvroSerdes } from '../schemas/serde.js';
import type { SendCommand } from '../schemas/records.js';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId } from '../schemas/ids.js';
import { loadConfig } from '../stack/config.js';
import { stackUp } from '../stack/local/index.js';
import { createConsumer, createKafka, createProducer, ensureTopics, removePrefixed, topicName, topics, TopicSerdes } from '../topics/index.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const BATCH = 500;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

function command(n: number): SendCommand {
  return {
    event_id: asEventId(`evt_${n}`),
    occurred_at: Date.now(),
    account_id: asAccountId('acc_bench'),
    project_id: asProjectId('prj_bench'),
    instance_id: asInstanceId(`inst_${n % 64}`),
    message_id: asMessageId(`msg_${n.toString(36).padStart(12, '0')}`),
    client_reference: n % 2 === 0 ? `order-${n}` : null,
    to: `55119${String(n).padStart(8, '0')}@s.whatsapp.net`,
    origin: 'api',
    campaign_id: null,
    idempotency_key_hash: null, expires_at: null,
    quoted_message_id: null,
    mentions: [],
    content: { kind: 'text', body: `Hello customer ${n}, your order is on its way. Reply STOP to opt out.` },
  };
}

interface Measured {
  readonly rate: number;
  readonly produceRate: number;
  readonly consumeRate: number;
}

async function main(): Promise<void> {
  const config = loadConfig();
  await stackUp({ root: config.stackRoot });
  const logger = pino({ level: 'warn' });
  const kafka = createKafka(config.kafka, logger);
  const avro = new AvroSerdes(config.schemaRegistryUrl, loadSchemaFiles());
  const base = `bench.${Date.now().toString(36)}`;
  const values = Array.from({ length: RECORDS }, (_, n) => command(n));
  const rawKafka = new Kafka({ brokers: [...config.kafka.brokers], logLevel: logLevel.NOTHING });
  const rawProducer = rawKafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
  await rawProducer.connect();
  const prefixes: string[] = [];

  /** Each round writes to topics of its own, so every consumer reads exactly RECORDS records. */
  const roundTopics = async (round: number) => {
    const prefix = `${base}.${round}.`;
    const raw = { name: 'raw', partitions: topics.sendCommands.partitions, cleanup: 'delete' as const };
    prefixes.push(prefix);
    await ensureTopics(kafka, [topics.sendCommands, raw], { prefix, replicationFactor: config.kafka.replicationFactor });
    return { prefix, serdes: await TopicSerdes.register(avro, [topics.sendCommands], prefix), rawTopic: topicName(raw, prefix) };
  };

  const first = await roundTopics(-1);
  const sizes = values.map((v) => first.serdes.for(topics.sendCommands).encode(v).length);
  const buffers = sizes.map((size) => randomBytes(size));

  /**
   * One round: both paths produce into topics of their own, batch for batch in turn (which goes
   * first alternates), so that a slow moment of the broker or of the machine falls on both alike;
   * then each path's consumer reads its topic, in an order that alternates between rounds.
   */
  const roundOf = async (round: number): Promise<{ serde: Measured; raw: Measured }> => {
    const { prefix, serdes, rawTopic } = await roundTopics(round);
    const producer = await createProducer(kafka, serdes);
    const spent = { serde: 0, raw: 0 };
    const timed = async (path: keyof typeof spent, send: () => Promise<unknown>) => {
      const started = performance.now();
      await send();
      spent[path] += performance.now() - started;
    };
    for (let i = 0; i < RECORDS; i += BATCH) {
      const batches = {
        serde: () => producer.send(topics.sendCommands, values.slice(i, i + BATCH).map((value) => ({ key: value.instance_id, value }))),
        raw: () => rawProducer.send({ topic: rawTopic, messages: buffers.slice(i, i + BATCH).map((value, j) => ({ key: values[i + j]!.instance_id, value })) }),
      };
      for (const path of inTurn(i / BATCH + round)) await timed(path, batches[path]);
    }
    await producer.disconnect();

    const consumers = {
      serde: async () => {
        const consumer = await createConsumer(kafka, serdes, { groupId: `${prefix}serde`, topics: [topics.sendCommands], fromBeginning: true });
        const ms = await consumeAll((onBatch) =>
          consumer.run(async (batch) => {
            batch.resolve(batch.records[batch.records.length - 1]!.offset);
            onBatch(batch.records.filter((r) => r.decoded.ok).length);
          }),
        );
        await consumer.stop();
        return ms;
      },
      raw: async () => {
        const consumer = rawKafka.consumer({ groupId: `${prefix}raw`, maxWaitTimeInMs: 100 });
        await consumer.connect();
        await consumer.subscribe({ topic: rawTopic, fromBeginning: true });
        const ms = await consumeAll((onBatch) =>
          consumer.run({ autoCommit: false, eachBatch: async ({ batch }) => onBatch(batch.messages.filter((m) => m.value !== null).length) }),
        );
        await consumer.disconnect();
        return ms;
      },
    };
    const consumed = { serde: 0, raw: 0 };
    for (const path of inTurn(round)) consumed[path] = await consumers[path]();
    return { serde: measured(spent.serde, consumed.serde), raw: measured(spent.raw, consumed.raw) };
  };

  const serde: Measured[] = [];
  const raw: Measured[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const paths = await roundOf(round);
    serde.push(paths.serde);
    raw.push(paths.raw);
    ratios.push(paths.serde.rate / paths.raw.rate);
  }
  const median = <T>(runs: readonly T[], by: (run: T) => number) => [...runs].sort((a, b) => by(a) - by(b))[Math.floor(runs.length / 2)]!;
  const line = (runs: Measured[]) => {
    const m = median(runs, (run) => run.rate);
    return `median ${m.rate.toFixed(0).padStart(8)} records/s (produce ${median(runs, (run) => run.produceRate).produceRate.toFixed(0)}/s, consume ${median(runs, (run) => run.consumeRate).consumeRate.toFixed(0)}/s)`;
  };
  const avgSize = Math.round(sizes.reduce((a, b) => a + b, 0) / sizes.length);
  console.log(`log benchmark: ${RECORDS} records a round, ${ROUNDS} rounds, ${avgSize} bytes a record on average; both paths produce batch for batch in turn, then each consumes (group join excluded)`);
  console.log(`  raw kafkajs, buffers   ${line(raw)}`);
  console.log(`  registry serde, Avro   ${line(serde)}`);
  console.log(`  ratio serde/raw        ${median(ratios, (r) => r).toFixed(2)}, the median round's (rounds: ${ratios.map((r) => r.toFixed(2)).join(' ')})   (target 0.80 or better, issue 22)`);

  await rawProducer.disconnect();
  for (const prefix of prefixes) await removePrefixed(kafka, config.schemaRegistryUrl, prefix);
}

/** Which path goes first at step `n`: each in turn. */
function inTurn(n: number): readonly ['serde', 'raw'] | readonly ['raw', 'serde'] {
  return n % 2 === 0 ? ['serde', 'raw'] : ['raw', 'serde'];
}

function measured(produceMs: number, consumeMs: number): Measured {
  const rate = (ms: number) => RECORDS / (ms / 1_000);
  return { rate: rate(produceMs + consumeMs), produceRate: rate(produceMs), consumeRate: rate(consumeMs) };
}

/**
 * Starts a consumer and resolves once it has seen every record of the round, with the time from
 * its first batch: joining the group takes a variable few seconds that say nothing of either path.
 */
async function consumeAll(start: (onBatch: (count: number) => void) => Promise<void>): Promise<number> {
  let seen = 0;
  let first = 0;
  return new Promise<number>((resolve, reject) => {
    start((count) => {
      if (seen === 0) first = performance.now();
      seen += count;
      if (seen >= RECORDS) resolve(performance.now() - first);
    }).catch(reject);
  });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
