import type { AvroSerdes, RecordSerde } from '../schemas/serde.js';
import { topicName, valueSubject, type TopicSpec } from './catalogue.js';

/** The registered serde of each topic's values, looked up by spec or by cluster topic name. */
export class TopicSerdes {
  private constructor(
    private readonly byName: ReadonlyMap<string, RecordSerde<unknown>>,
    readonly prefix: string,
  ) {}

  /** Registers the value schema of every given topic (idempotent: an unchanged schema keeps its id). */
  static async register(avro: AvroSerdes, specs: readonly TopicSpec<unknown>[], prefix: string): Promise<TopicSerdes> {
    const entries = await Promise.all(
      specs.map(async (spec) => [topicName(spec, prefix), await avro.register(valueSubject(spec, prefix), spec.schema)] as const),
    );
    return new TopicSerdes(new Map(entries), prefix);
  }

  for<V>(spec: TopicSpec<V>): RecordSerde<V> {
    const serde = this.byName.get(topicName(spec, this.prefix));
    if (!serde) throw new Error(`topic ${spec.name} was not registered`);
    return serde as RecordSerde<V>;
  }

  byTopicName(name: string): RecordSerde<unknown> | undefined {
    return this.byName.get(name);
  }
}
