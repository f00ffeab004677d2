import type { AvroSerdes, RecordSerde } from '../schemas/serde.js';
import { topicName, valueSubject, type TopicSpec } from './catalogue.js';

/** The registered serde of each topic's values, looked up by spec or by cluster topic name. */
export class TopicSerdes {
  /** Each spec's topic and serde, so a send does not join the prefix to the name and look it up again; weak, as a caller may make specs as it goes. */
  private readonly bySpec = new WeakMap<TopicSpec<unknown>, { readonly name: string; readonly serde: RecordSerde<unknown> }>();

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
    return this.topic(spec).serde as RecordSerde<V>;
  }

  /** The cluster name of a spec's topic (with the prefix). */
  nameOf(spec: TopicSpec<unknown>): string {
    return this.topic(spec).name;
  }

  private topic(spec: TopicSpec<unknown>): { readonly name: string; readonly serde: RecordSerde<unknown> } {
    let found = this.bySpec.get(spec);
    if (found === undefined) {
      const name = topicName(spec, this.prefix);
      const serde = this.byName.get(name);
      if (!serde) throw new Error(`topic ${spec.name} was not registered`);
      found = { name, serde };
      this.bySpec.set(spec, found);
    }
    return found;
  }

  byTopicName(name: string): RecordSerde<unknown> | undefined {
    return this.byName.get(name);
  }
}
