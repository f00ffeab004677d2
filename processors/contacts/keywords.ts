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
