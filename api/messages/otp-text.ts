import { randomInt } from 'node:crypto';
import type { Locale } from '../errors.js';

/** Context lines for an OTP, a few per language so that consecutive codes do not read alike. */
const openings: Record<Locale, readonly string[]> = {
  pt: ['Seu código de verificação está na próxima mensagem.', 'Use o código a seguir para continuar.', 'Aqui está o seu código de acesso.'],
  en: ['Your verification code is in the next message.', 'Use the following code to continue.', 'Here is your one-time code.'],
  es: ['Tu código de verificación está en el siguiente mensaje.', 'Usa el siguiente código para continuar.', 'Aquí tienes tu código de un solo uso.'],
  it: ['Il tuo codice di verifica è nel prossimo messaggio.', 'Usa il codice seguente per continuare.', 'Ecco il tuo codice monouso.'],
  de: ['Ihr Bestätigungscode steht in der nächsten Nachricht.', 'Verwenden Sie den folgenden Code, um fortzufahren.', 'Hier ist Ihr Einmalcode.'],
  fr: ['Votre code de vérification figure dans le message suivant.', 'Utilisez le code suivant pour continuer.', 'Voici votre code à usage unique.'],
};

const expiries: Record<Locale, (minutes: number) => string> = {
  pt: (m) => `Ele expira em ${m} ${m === 1 ? 'minuto' : 'minutos'}.`,
  en: (m) => `It expires in ${m} ${m === 1 ? 'minute' : 'minutes'}.`,
  es: (m) => `Caduca en ${m} ${m === 1 ? 'minuto' : 'minutos'}.`,
  it: (m) => `Scade tra ${m} ${m === 1 ? 'minuto' : 'minuti'}.`,
  de: (m) => `Er läuft in ${m} ${m === 1 ? 'Minute' : 'Minuten'} ab.`,
  fr: (m) => `Il expire dans ${m} ${m === 1 ? 'minute' : 'minutes'}.`,
};

const warnings: Record<Locale, string> = {
  pt: 'Não compartilhe este código com ninguém.',
  en: 'Do not share this code with anyone.',
  es: 'No compartas este código con nadie.',
  it: 'Non condividere questo codice con nessuno.',
  de: 'Geben Sie diesen Code an niemanden weiter.',
  fr: 'Ne partagez ce code avec personne.',
};

/** The text sent before the code bubble; it never contains the code. */
export function otpContext(locale: Locale, expiryMinutes: number | undefined): string {
  const choices = openings[locale];
  const parts = [choices[randomInt(choices.length)]!];
  if (expiryMinutes !== undefined) parts.push(expiries[locale](expiryMinutes));
  parts.push(warnings[locale]);
  return parts.join(' ');
}

/** All but the last two characters hidden: `••••56`. */
export function maskCode(code: string): string {
  return `${'•'.repeat(Math.max(code.length - 2, 2))}${code.slice(-2)}`;
}
