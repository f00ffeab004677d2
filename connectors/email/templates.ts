/** Languages of the e-mails, as of the error messages (spec 4.6). */
export type MailLocale = 'pt' | 'en' | 'es' | 'it' | 'de' | 'fr';

export interface Mail {
  readonly subject: string;
  readonly text: string;
}

const codeTexts: Record<MailLocale, { subject: string; body: (code: string, partner: string) => string }> = {
  pt: {
    subject: 'Seu código de verificação',
    body: (code, partner) => `Use o código ${code} para conectar sua conta a ${partner}.\n\nEle vale por 10 minutos. Se não foi você, ignore este e-mail.`,
  },
  en: {
    subject: 'Your verification code',
    body: (code, partner) => `Use the code ${code} to connect your account to ${partner}.\n\nIt is valid for 10 minutes. If this was not you, ignore this e-mail.`,
  },
  es: {
    subject: 'Tu código de verificación',
    body: (code, partner) => `Usa el código ${code} para conectar tu cuenta con ${partner}.\n\nEs válido durante 10 minutos. Si no fuiste tú, ignora este correo.`,
  },
  it: {
    subject: 'Il tuo codice di verifica',
    body: (code, partner) => `Usa il codice ${code} per collegare il tuo account a ${partner}.\n\nÈ valido per 10 minuti. Se non sei stato tu, ignora questa e-mail.`,
  },
  de: {
    subject: 'Ihr Bestätigungscode',
    body: (code, partner) => `Verwenden Sie den Code ${code}, um Ihr Konto mit ${partner} zu verbinden.\n\nEr ist 10 Minuten gültig. Wenn Sie das nicht waren, ignorieren Sie diese E-Mail.`,
  },
  fr: {
    subject: 'Votre code de vérification',
    body: (code, partner) => `Utilisez le code ${code} pour connecter votre compte à ${partner}.\n\nIl est valable 10 minutes. Si ce n’était pas vous, ignorez cet e-mail.`,
  },
};

/** The e-mail carrying a six-digit code that proves the customer owns the account's e-mail (spec 4.5). */
export function codeMail(locale: MailLocale, code: string, partnerName: string): Mail {
  const texts = codeTexts[locale];
  return { subject: texts.subject, text: texts.body(code, partnerName) };
}
