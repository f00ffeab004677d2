/** Languages of the e-mails, as of the error messages (spec 4.6). */
export type MailLocale = 'pt' | 'en' | 'es' | 'it' | 'de' | 'fr';

const MAIL_LOCALES: readonly string[] = ['pt', 'en', 'es', 'it', 'de', 'fr'] satisfies MailLocale[];

/** A locale read back from a record, where it is a plain string. */
export function isMailLocale(locale: string): locale is MailLocale {
  return MAIL_LOCALES.includes(locale);
}

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

const renewalTexts: Record<MailLocale, { subject: string; body: (price: string, url: string) => string }> = {
  pt: {
    subject: 'Renove seu plano Pro',
    body: (price, url) => `Seu plano Pro (${price} por mês) vence em breve. Pague a renovação por Pix neste link:\n\n${url}\n\nSem o pagamento, as integrações conectadas ficam suspensas até ele chegar.`,
  },
  en: {
    subject: 'Renew your Pro plan',
    body: (price, url) => `Your Pro plan (${price} a month) is due for renewal. Pay it by Pix at this link:\n\n${url}\n\nWithout payment, connected integrations are suspended until it arrives.`,
  },
  es: {
    subject: 'Renueva tu plan Pro',
    body: (price, url) => `Tu plan Pro (${price} al mes) debe renovarse. Págalo con Pix en este enlace:\n\n${url}\n\nSin el pago, las integraciones conectadas quedan suspendidas hasta que llegue.`,
  },
  it: {
    subject: 'Rinnova il tuo piano Pro',
    body: (price, url) => `Il tuo piano Pro (${price} al mese) è in scadenza. Paga il rinnovo con Pix a questo link:\n\n${url}\n\nSenza il pagamento, le integrazioni collegate restano sospese finché non arriva.`,
  },
  de: {
    subject: 'Verlängern Sie Ihren Pro-Tarif',
    body: (price, url) => `Ihr Pro-Tarif (${price} pro Monat) steht zur Verlängerung an. Bezahlen Sie sie per Pix über diesen Link:\n\n${url}\n\nOhne Zahlung werden verbundene Integrationen ausgesetzt, bis sie eingeht.`,
  },
  fr: {
    subject: 'Renouvelez votre offre Pro',
    body: (price, url) => `Votre offre Pro (${price} par mois) arrive à échéance. Réglez le renouvellement par Pix à ce lien :\n\n${url}\n\nSans paiement, les intégrations connectées sont suspendues jusqu’à sa réception.`,
  },
};

const INTL_LOCALES: Record<MailLocale, string> = { pt: 'pt-BR', en: 'en-US', es: 'es', it: 'it-IT', de: 'de-DE', fr: 'fr-FR' };

/** The e-mail carrying the link to pay a Pix renewal (spec 4.5 payment rule 2). */
export function renewalMail(locale: MailLocale, payUrl: string, price: { amount: number; currency: string }): Mail {
  const texts = renewalTexts[locale];
  const formatted = new Intl.NumberFormat(INTL_LOCALES[locale], { style: 'currency', currency: price.currency }).format(price.amount / 100);
  return { subject: texts.subject, text: texts.body(formatted, payUrl) };
}

const signInTexts: Record<MailLocale, { subject: string; body: (code: string) => string }> = {
  pt: { subject: 'Seu código de acesso', body: (code) => `Use o código ${code} para entrar no painel.\n\nEle vale por 10 minutos. Se não foi você, ignore este e-mail.` },
  en: { subject: 'Your sign-in code', body: (code) => `Use the code ${code} to sign in to the panel.\n\nIt is valid for 10 minutes. If this was not you, ignore this e-mail.` },
  es: { subject: 'Tu código de acceso', body: (code) => `Usa el código ${code} para entrar en el panel.\n\nEs válido durante 10 minutos. Si no fuiste tú, ignora este correo.` },
  it: { subject: 'Il tuo codice di accesso', body: (code) => `Usa il codice ${code} per accedere al pannello.\n\nÈ valido per 10 minuti. Se non sei stato tu, ignora questa e-mail.` },
  de: { subject: 'Ihr Anmeldecode', body: (code) => `Verwenden Sie den Code ${code}, um sich im Panel anzumelden.\n\nEr ist 10 Minuten gültig. Wenn Sie das nicht waren, ignorieren Sie diese E-Mail.` },
  fr: { subject: 'Votre code de connexion', body: (code) => `Utilisez le code ${code} pour vous connecter au panneau.\n\nIl est valable 10 minutes. Si ce n’était pas vous, ignorez cet e-mail.` },
};

/** The e-mail carrying a six-digit code to sign in to the panels. */
export function signInMail(locale: MailLocale, code: string): Mail {
  const texts = signInTexts[locale];
  return { subject: texts.subject, text: texts.body(code) };
}
