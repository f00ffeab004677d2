/**
 * Words that, sent alone, opt a customer out, in the gateway's six languages. English follows the
 * CTIA list used for SMS; the others are the usual equivalents. Written without accents: the body
 * is compared after accents, case, surrounding punctuation and repeated spaces are removed, so
 * `Arrêt`, ` stop! ` and `Opt-out` all match.
 */
const OPT_OUT_KEYWORDS = {
  en: ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'OPTOUT', 'OPT OUT'],
  pt: ['SAIR', 'PARAR', 'PARE', 'CANCELAR', 'DESCADASTRAR', 'DESCADASTRE'],
  es: ['BAJA', 'ALTO', 'PARAR', 'CANCELAR', 'DETENER', 'DARME DE BAJA'],
  it: ['DISISCRIVI', 'DISISCRIVIMI', 'CANCELLAMI', 'BASTA'],
  de: ['STOPP', 'ABMELDEN', 'ABBESTELLEN', 'AUSTRAGEN'],
  fr: ['ARRET', 'ARRETER', 'DESABONNER', 'DESINSCRIRE', 'DESINSCRIPTION'],
} as const;

const keywords: ReadonlySet<string> = new Set(Object.values(OPT_OUT_KEYWORDS).flat());

function canonical(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toUpperCase()
    .replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, '')
    .replace(/[\s_-]+/g, ' ');
}

/** Whether a whole message body is an opt-out keyword. */
export function isOptOutKeyword(body: string): boolean {
  return keywords.has(canonical(body));
}

/**
 * Phrases that make a reply negative (a complaint about the message, not an opt-out), in the six
 * languages, written like the keywords (an apostrophe is a space). A reply that is an opt-out keyword alone is an opt-out and
 * not counted here; one that says it inside a sentence ("please stop") is negative, but only for
 * the keywords that are not everyday words (END, BAJA, BASTA, … stay opt-outs alone).
 */
const NEGATIVE_PHRASES = {
  en: ['SPAM', 'STOP MESSAGING', 'STOP TEXTING', 'STOP SENDING', 'LEAVE ME ALONE', 'NOT INTERESTED', 'WHO IS THIS', 'REPORTED', 'DONT MESSAGE ME', 'DON T MESSAGE ME'],
  pt: ['SPAM', 'PARA DE MANDAR', 'PARE DE MANDAR', 'ME DEIXA EM PAZ', 'NAO TENHO INTERESSE', 'QUEM E VOCE', 'VOU DENUNCIAR'],
  es: ['SPAM', 'DEJA DE ESCRIBIRME', 'DEJEN DE ESCRIBIRME', 'DEJAME EN PAZ', 'NO ME INTERESA', 'QUIEN ERES', 'VOY A DENUNCIAR'],
  it: ['SPAM', 'SMETTI DI SCRIVERMI', 'SMETTETE DI SCRIVERMI', 'LASCIAMI IN PACE', 'NON MI INTERESSA', 'CHI SEI', 'TI SEGNALO'],
  de: ['SPAM', 'HOR AUF', 'HOREN SIE AUF', 'LASS MICH IN RUHE', 'KEIN INTERESSE', 'WER IST DA', 'MELDE DICH'],
  fr: ['SPAM', 'ARRETEZ DE M ECRIRE', 'ARRETE DE M ECRIRE', 'LAISSEZ MOI TRANQUILLE', 'PAS INTERESSE', 'QUI ETES VOUS', 'JE VOUS SIGNALE'],
} as const;

/** Opt-out keywords too common in ordinary sentences to mark one negative. */
const EVERYDAY_WORDS: ReadonlySet<string> = new Set(['CANCEL', 'END', 'QUIT', 'ALTO', 'BAJA', 'PARAR', 'PARE', 'CANCELAR', 'DETENER', 'SAIR', 'BASTA']);

const negativePhrases: readonly string[] = [...new Set([...Object.values(NEGATIVE_PHRASES).flat(), ...[...keywords].filter((k) => !EVERYDAY_WORDS.has(k))])];

/** Whether a reply complains about the message: a negative phrase in it, and it is not an opt-out keyword alone. */
export function isNegativeReply(body: string): boolean {
  if (isOptOutKeyword(body)) return false;
  const words = ` ${canonical(body).replace(/[^\p{L}\p{N}]+/gu, ' ')} `;
  return negativePhrases.some((phrase) => words.includes(` ${phrase} `));
}
