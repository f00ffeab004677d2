/**
 * The baselines of bench/send, run as child processes.
 * - By default, a bare Fastify route that takes the same JSON body and writes the same
 *   `SendCommand` (Avro through the registry) with the gateway's own batching producer, without
 *   auth, rate limit, idempotency, number choice, standing checks or validation.
 * - With `raw N`, the physical reference: no HTTP and no gathering, N such records already encoded,
 *   produced from one process by plain kafkajs in requests of 1,000 (acks all, idempotent); prints
 *   records/s.
 * Both write to `gw.commands.send` under `BENCH_PREFIX`, which the parent created.
 */
import Fastify from 'fastify';
import { Kafka, logLevel } from 'kafkajs';
import { pino } from 'pino';
import { asAccountId, asEventId, asInstanceId, asMessageId, asProjectId, newId } from '../schemas/ids.js';
import { loadSchemaFiles } from '../schemas/load.js';
import { phoneJid } from '../schemas/phones.js';
import type { SendCommand } from '../schemas/records.js';
import { AvroSerdes } from '../schemas/serde.js';
import { loadConfig } from '../stack/config.js';
import { createKafka, createProducer, topicName, topics, TopicSerdes } from '../topics/index.js';

const prefix = process.env.BENCH_PREFIX ?? 'bench.bare.';
const config = loadConfig();
const serdes = await TopicSerdes.register(new AvroSerdes(config.schemaRegistryUrl, loadSchemaFiles()), [topics.sendCommands], prefix);

/** The command the gateway writes for `POST /messages/text` with this body. */
function command(body: { to: string; body: string; client_reference?: string }): SendCommand {
  return {
    event_id: asEventId(newId('evt')),
    occurred_at: Date.now(),
    account_id: asAccountId('acc_bench'),
    project_id: asProjectId('prj_bench'),
    instance_id: asInstanceId('inst_bench'),
    message_id: asMessageId(newId('msg')),
    client_reference: body.client_reference ?? null,
    to: phoneJid(body.to),
    origin: 'api',
    campaign_id: null,
    idempotency_key_hash: null,
    expires_at: Date.now() + 86_400_000,
    quoted_message_id: null,
    mentions: [],
    content: { kind: 'text', body: body.body },
  };
}

async function serve(): Promise<void> {
  const producer = await createProducer(createKafka(config.kafka, pino({ level: 'silent' })), serdes);
  const app = Fastify();
  app.post('/messages/text', async (request, reply) => {
    const value = command(request.body as { to: string; body: string; client_reference?: string });
    await producer.send(topics.sendCommands, [{ key: value.instance_id, value }]);
    return reply.code(202).send({ message_id: value.message_id, status: 'queued', client_reference: value.client_reference });
  });
  await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
  console.log(JSON.stringify({ port: (app.server.address() as { port: number }).port }));
}

async function raw(count: number): Promise<void> {
  const kafka = new Kafka({ brokers: [...config.kafka.brokers], logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const serde = serdes.for(topics.sendCommands);
  const messages = Array.from({ length: count }, (_, n) => {
    const value = command({ to: `+55119${String(10_000_000 + (n % 1_000))}`, body: `Your order ${n} is on its way.`, client_reference: `order-${n}` });
    return { key: `inst_bench_${n % 12}`, value: serde.encode(value) };
  });
  const topic = topicName(topics.sendCommands, prefix);
  const started = performance.now();
  for (let i = 0; i < messages.length; i += 1_000) await producer.send({ topic, acks: -1, messages: messages.slice(i, i + 1_000) });
  const seconds = (performance.now() - started) / 1_000;
  await producer.disconnect();
  console.log(JSON.stringify({ records: count, per_second: count / seconds, bytes: messages[0]!.value.length }));
}

const [mode, count] = process.argv.slice(2);
await (mode === 'raw' ? raw(Number(count)) : serve());
