// The gateway's error catalogue: every error code with its HTTP status and its message in each
// supported language. Codes come from the spec's error table (section 7) plus a few the gateway
// needs for itself (marked below). Logic must use `code`; `message` is for people.
//
// Message templates may name parameters as `{name}`. A segment in square brackets is kept only
// when every parameter it names is given, so `The event[ {event}] ...` reads well either way.

export const LOCALES = ['pt', 'en', 'es', 'it', 'de', 'fr'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

interface ErrorDefinition {
  readonly status: number;
  readonly message: Readonly<Record<Locale, string>>;
}

export const ERRORS = {
  // --- Spec, section 7 -------------------------------------------------------------------------
  unauthorized: {
    status: 401, // "not given" in the spec
    message: {
      pt: 'Autenticação ausente ou inválida. Envie uma chave de API válida.',
      en: 'Authentication is missing or invalid. Send a valid API key.',
      es: 'La autenticación falta o no es válida. Envía una clave de API válida.',
      it: 'Autenticazione mancante o non valida. Invia una chiave API valida.',
      de: 'Die Authentifizierung fehlt oder ist ungültig. Senden Sie einen gültigen API-Schlüssel.',
      fr: 'L’authentification est absente ou invalide. Envoyez une clé d’API valide.',
    },
  },
  forbidden: {
    status: 403,
    message: {
      pt: 'Esta chave de API não tem acesso a este endpoint.',
      en: 'This API key does not have access to this endpoint.',
      es: 'Esta clave de API no tiene acceso a este endpoint.',
      it: 'Questa chiave API non ha accesso a questo endpoint.',
      de: 'Dieser API-Schlüssel hat keinen Zugriff auf diesen Endpunkt.',
      fr: 'Cette clé d’API n’a pas accès à cette route.',
    },
  },
  rate_limited: {
    status: 429,
    message: {
      pt: 'Muitas requisições. Aguarde um instante e tente novamente.',
      en: 'Too many requests. Wait a moment and try again.',
      es: 'Demasiadas solicitudes. Espera un momento y vuelve a intentarlo.',
      it: 'Troppe richieste. Attendi un momento e riprova.',
      de: 'Zu viele Anfragen. Warten Sie einen Moment und versuchen Sie es erneut.',
      fr: 'Trop de requêtes. Patientez un instant, puis réessayez.',
    },
  },
  not_connected: {
    status: 409, // "not given" in the spec
    message: {
      pt: 'Este número não está conectado. Reconecte-o antes de enviar mensagens.',
      en: 'This number is not connected. Reconnect it before sending messages.',
      es: 'Este número no está conectado. Vuelve a conectarlo antes de enviar mensajes.',
      it: 'Questo numero non è connesso. Ricollegalo prima di inviare messaggi.',
      de: 'Diese Nummer ist nicht verbunden. Verbinden Sie sie erneut, bevor Sie Nachrichten senden.',
      fr: 'Ce numéro n’est pas connecté. Reconnectez-le avant d’envoyer des messages.',
    },
  },
  no_number_available: {
    status: 409, // "not given" in the spec
    message: {
      pt: 'Nenhum número deste projeto está disponível para envio agora. Conecte um número ou tente novamente mais tarde.',
      en: 'No number in this project is available to send right now. Connect a number or try again later.',
      es: 'Ningún número de este proyecto está disponible para enviar ahora. Conecta un número o vuelve a intentarlo más tarde.',
      it: 'Nessun numero di questo progetto è disponibile per l’invio in questo momento. Collega un numero o riprova più tardi.',
      de: 'Derzeit ist keine Nummer dieses Projekts zum Senden verfügbar. Verbinden Sie eine Nummer oder versuchen Sie es später erneut.',
      fr: 'Aucun numéro de ce projet n’est disponible pour l’envoi pour le moment. Connectez un numéro ou réessayez plus tard.',
    },
  },
  not_supported: {
    status: 422, // "not given" in the spec
    message: {
      pt: 'Este recurso ainda não é suportado.',
      en: 'This feature is not supported yet.',
      es: 'Esta función todavía no está disponible.',
      it: 'Questa funzionalità non è ancora supportata.',
      de: 'Diese Funktion wird noch nicht unterstützt.',
      fr: 'Cette fonctionnalité n’est pas encore prise en charge.',
    },
  },
  media_too_large: {
    status: 413, // "not given" in the spec
    message: {
      pt: 'O arquivo de mídia excede o limite permitido[ de {limit}]. Envie um arquivo menor ou mais curto.',
      en: 'The media file exceeds the allowed limit[ of {limit}]. Send a smaller or shorter file.',
      es: 'El archivo multimedia supera el límite permitido[ de {limit}]. Envía un archivo más pequeño o más corto.',
      it: 'Il file multimediale supera il limite consentito[ di {limit}]. Invia un file più piccolo o più breve.',
      de: 'Die Mediendatei überschreitet das zulässige Limit[ von {limit}]. Senden Sie eine kleinere oder kürzere Datei.',
      fr: 'Le fichier média dépasse la limite autorisée[ de {limit}]. Envoyez un fichier plus petit ou plus court.',
    },
  },
  idempotency_key_invalid: {
    status: 400,
    message: {
      pt: 'O cabeçalho Idempotency-Key deve ter no máximo 255 caracteres.',
      en: 'The Idempotency-Key header must be at most 255 characters long.',
      es: 'La cabecera Idempotency-Key debe tener como máximo 255 caracteres.',
      it: 'L’intestazione Idempotency-Key deve avere al massimo 255 caratteri.',
      de: 'Der Header Idempotency-Key darf höchstens 255 Zeichen lang sein.',
      fr: 'L’en-tête Idempotency-Key ne doit pas dépasser 255 caractères.',
    },
  },
  idempotency_in_progress: {
    status: 409,
    message: {
      pt: 'Uma requisição com esta Idempotency-Key ainda está em processamento. Aguarde a conclusão antes de tentar novamente.',
      en: 'A request with this Idempotency-Key is still being processed. Wait for it to finish before retrying.',
      es: 'Una solicitud con esta Idempotency-Key todavía se está procesando. Espera a que termine antes de reintentar.',
      it: 'Una richiesta con questa Idempotency-Key è ancora in elaborazione. Attendi che termini prima di riprovare.',
      de: 'Eine Anfrage mit diesem Idempotency-Key wird noch verarbeitet. Warten Sie, bis sie abgeschlossen ist, bevor Sie es erneut versuchen.',
      fr: 'Une requête avec cette Idempotency-Key est encore en cours de traitement. Attendez qu’elle se termine avant de réessayer.',
    },
  },
  idempotency_key_reused: {
    status: 422,
    message: {
      pt: 'Esta Idempotency-Key já foi usada com um corpo de requisição diferente. Use uma nova chave para outra requisição.',
      en: 'This Idempotency-Key was already used with a different request body. Use a new key for a different request.',
      es: 'Esta Idempotency-Key ya se usó con un cuerpo de solicitud distinto. Usa una clave nueva para otra solicitud.',
      it: 'Questa Idempotency-Key è già stata usata con un corpo della richiesta diverso. Usa una nuova chiave per una richiesta diversa.',
      de: 'Dieser Idempotency-Key wurde bereits mit einem anderen Anfrageinhalt verwendet. Verwenden Sie für eine andere Anfrage einen neuen Schlüssel.',
      fr: 'Cette Idempotency-Key a déjà été utilisée avec un corps de requête différent. Utilisez une nouvelle clé pour une autre requête.',
    },
  },
  event_taken: {
    status: 409,
    message: {
      pt: 'O evento[ {event}] já tem um webhook neste projeto. Atualize esse webhook ou escolha outro evento.',
      en: 'The event[ {event}] already has a webhook in this project. Update that webhook or choose another event.',
      es: 'El evento[ {event}] ya tiene un webhook en este proyecto. Actualiza ese webhook o elige otro evento.',
      it: 'L’evento[ {event}] ha già un webhook in questo progetto. Aggiorna quel webhook o scegli un altro evento.',
      de: 'Für das Ereignis[ {event}] gibt es in diesem Projekt bereits einen Webhook. Aktualisieren Sie diesen Webhook oder wählen Sie ein anderes Ereignis.',
      fr: 'L’événement[ {event}] a déjà un webhook dans ce projet. Modifiez ce webhook ou choisissez un autre événement.',
    },
  },
  partner_unauthorized: {
    status: 401,
    message: {
      pt: 'O segredo de parceiro está ausente ou é inválido. Envie o segredo atual no cabeçalho Authorization: Bearer.',
      en: 'The partner secret is missing or invalid. Send the current secret in the Authorization: Bearer header.',
      es: 'El secreto de socio falta o no es válido. Envía el secreto actual en la cabecera Authorization: Bearer.',
      it: 'Il segreto partner è mancante o non valido. Invia il segreto attuale nell’intestazione Authorization: Bearer.',
      de: 'Das Partner-Secret fehlt oder ist ungültig. Senden Sie das aktuelle Secret im Header Authorization: Bearer.',
      fr: 'Le secret partenaire est absent ou invalide. Envoyez le secret actuel dans l’en-tête Authorization: Bearer.',
    },
  },
  partner_inactive: {
    status: 403,
    message: {
      pt: 'Esta integração de parceiro está desativada.',
      en: 'This partner integration is deactivated.',
      es: 'Esta integración de socio está desactivada.',
      it: 'Questa integrazione partner è disattivata.',
      de: 'Diese Partnerintegration ist deaktiviert.',
      fr: 'Cette intégration partenaire est désactivée.',
    },
  },
  external_id_required: {
    status: 400,
    message: {
      pt: 'O campo external_id é obrigatório e deve ter no máximo 200 caracteres.',
      en: 'The external_id field is required and must be at most 200 characters long.',
      es: 'El campo external_id es obligatorio y debe tener como máximo 200 caracteres.',
      it: 'Il campo external_id è obbligatorio e deve avere al massimo 200 caratteri.',
      de: 'Das Feld external_id ist erforderlich und darf höchstens 200 Zeichen lang sein.',
      fr: 'Le champ external_id est obligatoire et ne doit pas dépasser 200 caractères.',
    },
  },
  customer_email_required: {
    status: 400,
    message: {
      pt: 'O campo customer.email é obrigatório e deve ser um endereço de e-mail válido.',
      en: 'The customer.email field is required and must be a valid e-mail address.',
      es: 'El campo customer.email es obligatorio y debe ser una dirección de correo electrónico válida.',
      it: 'Il campo customer.email è obbligatorio e deve essere un indirizzo e-mail valido.',
      de: 'Das Feld customer.email ist erforderlich und muss eine gültige E-Mail-Adresse sein.',
      fr: 'Le champ customer.email est obligatoire et doit contenir une adresse e-mail valide.',
    },
  },
  customer_name_required: {
    status: 400,
    message: {
      pt: 'É obrigatório informar customer.name ou customer.company.',
      en: 'At least one of customer.name or customer.company is required.',
      es: 'Es obligatorio indicar customer.name o customer.company.',
      it: 'È obbligatorio indicare almeno uno tra customer.name e customer.company.',
      de: 'Mindestens eines der Felder customer.name oder customer.company ist erforderlich.',
      fr: 'Au moins un des champs customer.name ou customer.company est obligatoire.',
    },
  },
  code_required: {
    status: 400,
    message: {
      pt: 'O campo code é obrigatório. Envie o código de conexão recebido.',
      en: 'The code field is required. Send the connect code you received.',
      es: 'El campo code es obligatorio. Envía el código de conexión que recibiste.',
      it: 'Il campo code è obbligatorio. Invia il codice di connessione ricevuto.',
      de: 'Das Feld code ist erforderlich. Senden Sie den erhaltenen Verbindungscode.',
      fr: 'Le champ code est obligatoire. Envoyez le code de connexion reçu.',
    },
  },
  // One entry for both uses in the spec: the partner's connect code and the component's e-mail code.
  invalid_code: {
    status: 400,
    message: {
      pt: 'Este código é inválido, expirou ou já foi usado. Confira-o ou obtenha um novo código.',
      en: 'This code is invalid, expired or already used. Check it or get a new code.',
      es: 'Este código no es válido, caducó o ya se usó. Revísalo u obtén un código nuevo.',
      it: 'Questo codice non è valido, è scaduto o è già stato usato. Controllalo o richiedine uno nuovo.',
      de: 'Dieser Code ist ungültig, abgelaufen oder wurde bereits verwendet. Prüfen Sie ihn oder fordern Sie einen neuen Code an.',
      fr: 'Ce code est invalide, a expiré ou a déjà été utilisé. Vérifiez-le ou obtenez-en un nouveau.',
    },
  },
  connect_session_required: {
    status: 401,
    message: {
      pt: 'O cabeçalho X-Connect-Session está ausente. Abra o componente com uma sessão válida.',
      en: 'The X-Connect-Session header is missing. Open the component with a valid session.',
      es: 'Falta la cabecera X-Connect-Session. Abre el componente con una sesión válida.',
      it: 'Manca l’intestazione X-Connect-Session. Apri il componente con una sessione valida.',
      de: 'Der Header X-Connect-Session fehlt. Öffnen Sie die Komponente mit einer gültigen Sitzung.',
      fr: 'L’en-tête X-Connect-Session est absent. Ouvrez le composant avec une session valide.',
    },
  },
  invalid_connect_session: {
    status: 401,
    message: {
      pt: 'Esta sessão de conexão não é válida. Inicie uma nova sessão.',
      en: 'This connect session is not valid. Start a new session.',
      es: 'Esta sesión de conexión no es válida. Inicia una nueva sesión.',
      it: 'Questa sessione di connessione non è valida. Avvia una nuova sessione.',
      de: 'Diese Verbindungssitzung ist ungültig. Starten Sie eine neue Sitzung.',
      fr: 'Cette session de connexion n’est pas valide. Démarrez une nouvelle session.',
    },
  },
  connect_session_expired: {
    status: 401,
    message: {
      pt: 'Esta sessão de conexão expirou. Inicie uma nova sessão para continuar.',
      en: 'This connect session has expired. Start a new session to continue.',
      es: 'Esta sesión de conexión ha caducado. Inicia una nueva sesión para continuar.',
      it: 'Questa sessione di connessione è scaduta. Avvia una nuova sessione per continuare.',
      de: 'Diese Verbindungssitzung ist abgelaufen. Starten Sie eine neue Sitzung, um fortzufahren.',
      fr: 'Cette session de connexion a expiré. Démarrez une nouvelle session pour continuer.',
    },
  },
  origin_not_allowed: {
    status: 403,
    message: {
      pt: 'A origem desta página não é permitida para este parceiro.',
      en: 'The origin of this page is not allowed for this partner.',
      es: 'El origen de esta página no está permitido para este socio.',
      it: 'L’origine di questa pagina non è consentita per questo partner.',
      de: 'Der Ursprung dieser Seite ist für diesen Partner nicht zugelassen.',
      fr: 'L’origine de cette page n’est pas autorisée pour ce partenaire.',
    },
  },
  connection_revoked: {
    status: 409,
    message: {
      pt: 'Esta conexão foi revogada e não pode mais ser usada.',
      en: 'This connection has been revoked and can no longer be used.',
      es: 'Esta conexión fue revocada y ya no se puede usar.',
      it: 'Questa connessione è stata revocata e non può più essere usata.',
      de: 'Diese Verbindung wurde widerrufen und kann nicht mehr verwendet werden.',
      fr: 'Cette connexion a été révoquée et ne peut plus être utilisée.',
    },
  },
  account_required: {
    status: 409,
    message: {
      pt: 'Vincule ou crie uma conta antes de continuar com esta etapa.',
      en: 'Link or create an account before continuing with this step.',
      es: 'Vincula o crea una cuenta antes de continuar con este paso.',
      it: 'Collega o crea un account prima di proseguire con questo passaggio.',
      de: 'Verknüpfen oder erstellen Sie ein Konto, bevor Sie mit diesem Schritt fortfahren.',
      fr: 'Associez ou créez un compte avant de poursuivre cette étape.',
    },
  },
  account_admin_required: {
    status: 403,
    message: {
      pt: 'Este e-mail não pertence a um administrador da conta. Use o e-mail de um administrador.',
      en: 'This e-mail address does not belong to an administrator of the account. Use the e-mail address of an administrator.',
      es: 'Este correo electrónico no pertenece a un administrador de la cuenta. Usa el correo de un administrador.',
      it: 'Questo indirizzo e-mail non appartiene a un amministratore dell’account. Usa l’e-mail di un amministratore.',
      de: 'Diese E-Mail-Adresse gehört keinem Administrator des Kontos. Verwenden Sie die E-Mail-Adresse eines Administrators.',
      fr: 'Cette adresse e-mail n’appartient pas à un administrateur du compte. Utilisez l’adresse d’un administrateur.',
    },
  },
  code_attempts_exceeded: {
    status: 429,
    message: {
      pt: 'Muitas tentativas de código incorretas para este e-mail. Tente novamente mais tarde.',
      en: 'Too many wrong code attempts for this e-mail address. Try again later.',
      es: 'Demasiados intentos de código incorrectos para este correo electrónico. Vuelve a intentarlo más tarde.',
      it: 'Troppi tentativi errati con il codice per questo indirizzo e-mail. Riprova più tardi.',
      de: 'Zu viele falsche Codeeingaben für diese E-Mail-Adresse. Versuchen Sie es später erneut.',
      fr: 'Trop de tentatives de code erronées pour cette adresse e-mail. Réessayez plus tard.',
    },
  },
  code_sends_exceeded: {
    status: 429,
    message: {
      pt: 'Foram enviados muitos códigos para este e-mail na última hora. Aguarde um pouco antes de pedir outro.',
      en: 'Too many codes were sent to this e-mail address in the last hour. Wait a while before requesting another one.',
      es: 'Se enviaron demasiados códigos a este correo electrónico en la última hora. Espera un poco antes de pedir otro.',
      it: 'Sono stati inviati troppi codici a questo indirizzo e-mail nell’ultima ora. Attendi un po’ prima di richiederne un altro.',
      de: 'In der letzten Stunde wurden zu viele Codes an diese E-Mail-Adresse gesendet. Warten Sie etwas, bevor Sie einen neuen anfordern.',
      fr: 'Trop de codes ont été envoyés à cette adresse e-mail au cours de la dernière heure. Patientez avant d’en demander un autre.',
    },
  },
  account_not_found: {
    status: 404,
    message: {
      pt: 'Nenhuma conta usa este endereço de e-mail. Confira o endereço ou crie uma nova conta.',
      en: 'No account uses this e-mail address. Check the address or create a new account.',
      es: 'Ninguna cuenta usa esta dirección de correo electrónico. Revisa la dirección o crea una cuenta nueva.',
      it: 'Nessun account usa questo indirizzo e-mail. Controlla l’indirizzo o crea un nuovo account.',
      de: 'Zu dieser E-Mail-Adresse gibt es kein Konto. Prüfen Sie die Adresse oder erstellen Sie ein neues Konto.',
      fr: 'Aucun compte n’utilise cette adresse e-mail. Vérifiez l’adresse ou créez un nouveau compte.',
    },
  },
  payment_required: {
    status: 402,
    message: {
      pt: 'É preciso pagar o plano Pro antes desta etapa.',
      en: 'The Pro plan must be paid before this step.',
      es: 'Debes pagar el plan Pro antes de este paso.',
      it: 'Devi pagare il piano Pro prima di questo passaggio.',
      de: 'Vor diesem Schritt muss der Pro-Tarif bezahlt werden.',
      fr: 'Le forfait Pro doit être payé avant cette étape.',
    },
  },
  payment_pending: {
    status: 409,
    message: {
      pt: 'Um pagamento anterior ainda está sendo confirmado. Aguarde a confirmação antes de tentar novamente.',
      en: 'A previous payment is still being confirmed. Wait for the confirmation before trying again.',
      es: 'Un pago anterior aún se está confirmando. Espera la confirmación antes de volver a intentarlo.',
      it: 'Un pagamento precedente è ancora in fase di conferma. Attendi la conferma prima di riprovare.',
      de: 'Eine vorherige Zahlung wird noch bestätigt. Warten Sie die Bestätigung ab, bevor Sie es erneut versuchen.',
      fr: 'Un paiement précédent est encore en cours de confirmation. Attendez la confirmation avant de réessayer.',
    },
  },
  already_paid: {
    status: 409,
    message: {
      pt: 'O plano Pro já está pago. Nenhum outro pagamento é necessário.',
      en: 'The Pro plan is already paid. No further payment is needed.',
      es: 'El plan Pro ya está pagado. No hace falta ningún otro pago.',
      it: 'Il piano Pro è già pagato. Non serve alcun altro pagamento.',
      de: 'Der Pro-Tarif ist bereits bezahlt. Es ist keine weitere Zahlung nötig.',
      fr: 'Le forfait Pro est déjà payé. Aucun autre paiement n’est nécessaire.',
    },
  },
  method_unavailable: {
    status: 422,
    message: {
      pt: 'Esta forma de pagamento não pode ser usada neste pagamento. Escolha outra.',
      en: 'This payment method cannot be used for this payment. Choose another method.',
      es: 'Este método de pago no se puede usar para este pago. Elige otro método.',
      it: 'Questo metodo di pagamento non può essere usato per questo pagamento. Scegli un altro metodo.',
      de: 'Diese Zahlungsmethode kann für diese Zahlung nicht verwendet werden. Wählen Sie eine andere Methode.',
      fr: 'Ce moyen de paiement ne peut pas être utilisé pour ce paiement. Choisissez-en un autre.',
    },
  },
  payment_unavailable: {
    status: 502,
    message: {
      pt: 'O processador de pagamentos não conseguiu processar esta forma de pagamento. Tente novamente ou escolha outra.',
      en: 'The payment processor could not process this method. Try again or choose another method.',
      es: 'El procesador de pagos no pudo procesar este método. Vuelve a intentarlo o elige otro método.',
      it: 'Il processore di pagamento non è riuscito a elaborare questo metodo. Riprova o scegli un altro metodo.',
      de: 'Der Zahlungsdienstleister konnte diese Zahlungsmethode nicht verarbeiten. Versuchen Sie es erneut oder wählen Sie eine andere Methode.',
      fr: 'Le prestataire de paiement n’a pas pu traiter ce moyen de paiement. Réessayez ou choisissez-en un autre.',
    },
  },
  number_required: {
    status: 409,
    message: {
      pt: 'Conecte um número antes de concluir.',
      en: 'Connect a number before completing.',
      es: 'Conecta un número antes de finalizar.',
      it: 'Collega un numero prima di completare.',
      de: 'Verbinden Sie eine Nummer, bevor Sie abschließen.',
      fr: 'Connectez un numéro avant de terminer.',
    },
  },
  quota_exceeded: {
    status: 402,
    message: {
      pt: 'Seu plano atingiu o limite de números. Faça upgrade do plano ou remova um número.',
      en: 'Your plan has reached its limit of numbers. Upgrade the plan or remove a number.',
      es: 'Tu plan alcanzó su límite de números. Mejora el plan o elimina un número.',
      it: 'Il tuo piano ha raggiunto il limite di numeri. Passa a un piano superiore o rimuovi un numero.',
      de: 'Ihr Tarif hat die maximale Anzahl an Nummern erreicht. Erweitern Sie den Tarif oder entfernen Sie eine Nummer.',
      fr: 'Votre forfait a atteint sa limite de numéros. Passez à une offre supérieure ou supprimez un numéro.',
    },
  },
  connection_not_found: {
    status: 404,
    message: {
      pt: 'Conexão não encontrada.',
      en: 'Connection not found.',
      es: 'No se encontró la conexión.',
      it: 'Connessione non trovata.',
      de: 'Verbindung nicht gefunden.',
      fr: 'Connexion introuvable.',
    },
  },
  connection_not_active: {
    status: 409,
    message: {
      pt: 'Esta conexão não está ativa, portanto não é possível rotacionar a chave.',
      en: 'This connection is not active, so its key cannot be rotated.',
      es: 'Esta conexión no está activa, por lo que no se puede rotar su clave.',
      it: 'Questa connessione non è attiva, quindi non è possibile ruotarne la chiave.',
      de: 'Diese Verbindung ist nicht aktiv, daher kann ihr Schlüssel nicht rotiert werden.',
      fr: 'Cette connexion n’est pas active : sa clé ne peut donc pas être renouvelée.',
    },
  },
  connect_suspended: {
    status: 402,
    message: {
      pt: 'Este acesso está suspenso porque o plano Pro não foi pago. Ele volta a funcionar assim que o pagamento for feito.',
      en: 'This access is suspended because the Pro plan is unpaid. It resumes as soon as the payment is made.',
      es: 'Este acceso está suspendido porque el plan Pro no está pagado. Se reactivará en cuanto se realice el pago.',
      it: 'Questo accesso è sospeso perché il piano Pro non è stato pagato. Verrà riattivato non appena il pagamento sarà effettuato.',
      de: 'Dieser Zugang ist gesperrt, weil der Pro-Tarif nicht bezahlt ist. Er wird wieder aktiviert, sobald die Zahlung eingegangen ist.',
      fr: 'Cet accès est suspendu car le forfait Pro n’est pas payé. Il sera rétabli dès que le paiement sera effectué.',
    },
  },
  connect_revoked: {
    status: 401,
    message: {
      pt: 'Esta chave de API não é mais válida porque a conexão foi encerrada.',
      en: 'This API key is no longer valid because its connection has ended.',
      es: 'Esta clave de API ya no es válida porque su conexión terminó.',
      it: 'Questa chiave API non è più valida perché la sua connessione è terminata.',
      de: 'Dieser API-Schlüssel ist nicht mehr gültig, weil die zugehörige Verbindung beendet wurde.',
      fr: 'Cette clé d’API n’est plus valide car sa connexion a pris fin.',
    },
  },

  // --- Gateway codes, not in the spec ----------------------------------------------------------
  // Body, query or params fail their JSON schema; `detail` is the first validation problem.
  invalid_request: {
    status: 400,
    message: {
      pt: 'A requisição é inválida[: {detail}]. Corrija-a e envie novamente.',
      en: 'The request is invalid[: {detail}]. Fix it and send it again.',
      es: 'La solicitud no es válida[: {detail}]. Corrígela y vuelve a enviarla.',
      it: 'La richiesta non è valida[: {detail}]. Correggila e inviala di nuovo.',
      de: 'Die Anfrage ist ungültig[: {detail}]. Korrigieren Sie sie und senden Sie sie erneut.',
      fr: 'La requête est invalide[ : {detail}]. Corrigez-la et renvoyez-la.',
    },
  },
  // GET /metrics without the metrics token, or from outside the host while none is set (docs/metrics.md).
  metrics_unauthorized: {
    status: 401,
    message: {
      pt: 'As métricas exigem o token de métricas (METRICS_TOKEN) no cabeçalho Authorization: Bearer; sem token configurado, só o próprio host do gateway pode lê-las.',
      en: 'Metrics need the metrics token (METRICS_TOKEN) in the Authorization: Bearer header; while none is set, only the gateway’s own host may read them.',
      es: 'Las métricas requieren el token de métricas (METRICS_TOKEN) en la cabecera Authorization: Bearer; sin token configurado, solo el propio host del gateway puede leerlas.',
      it: 'Le metriche richiedono il token delle metriche (METRICS_TOKEN) nell’intestazione Authorization: Bearer; senza un token configurato, solo l’host del gateway può leggerle.',
      de: 'Die Metriken erfordern das Metrik-Token (METRICS_TOKEN) im Header Authorization: Bearer; solange keines gesetzt ist, kann nur der Host des Gateways sie lesen.',
      fr: 'Les métriques exigent le jeton de métriques (METRICS_TOKEN) dans l’en-tête Authorization: Bearer ; tant qu’aucun n’est défini, seul l’hôte de la passerelle peut les lire.',
    },
  },
  // Also for resources of another project, so their existence does not leak.
  not_found: {
    status: 404,
    message: {
      pt: 'O recurso solicitado não foi encontrado.',
      en: 'The requested resource was not found.',
      es: 'No se encontró el recurso solicitado.',
      it: 'La risorsa richiesta non è stata trovata.',
      de: 'Die angeforderte Ressource wurde nicht gefunden.',
      fr: 'La ressource demandée est introuvable.',
    },
  },
  // Also for a phone on the account's suppression list or blocklist (docs/api.md#suppressions-and-blocklist).
  contact_opted_out: {
    status: 422,
    message: {
      pt: 'Este contato optou por não receber mensagens ou está na lista de supressão ou de bloqueio da conta. A mensagem não foi enviada.',
      en: 'This contact has opted out of receiving messages, or is on the account’s suppression list or blocklist. The message was not sent.',
      es: 'Este contacto decidió no recibir mensajes o está en la lista de supresión o de bloqueo de la cuenta. El mensaje no se envió.',
      it: 'Questo contatto ha scelto di non ricevere messaggi oppure è nella lista di soppressione o di blocco dell’account. Il messaggio non è stato inviato.',
      de: 'Dieser Kontakt hat dem Empfang von Nachrichten widersprochen oder steht auf der Unterdrückungs- oder Sperrliste des Kontos. Die Nachricht wurde nicht gesendet.',
      fr: 'Ce contact a choisi de ne plus recevoir de messages ou figure sur la liste de suppression ou de blocage du compte. Le message n’a pas été envoyé.',
    },
  },
  campaign_state: {
    status: 409,
    message: {
      pt: 'A campanha está {status} e não permite esta ação.',
      en: 'The campaign is {status} and does not allow this action.',
      es: 'La campaña está {status} y no permite esta acción.',
      it: 'La campagna è {status} e non consente questa azione.',
      de: 'Die Kampagne ist {status} und erlaubt diese Aktion nicht.',
      fr: 'La campagne est {status} et ne permet pas cette action.',
    },
  },
  internal_error: {
    status: 500,
    message: {
      pt: 'Ocorreu um erro do nosso lado. Tente novamente mais tarde.',
      en: 'Something went wrong on our side. Try again later.',
      es: 'Se produjo un error de nuestro lado. Vuelve a intentarlo más tarde.',
      it: 'Si è verificato un errore da parte nostra. Riprova più tardi.',
      de: 'Bei uns ist ein Fehler aufgetreten. Versuchen Sie es später erneut.',
      fr: 'Une erreur s’est produite de notre côté. Réessayez plus tard.',
    },
  },
  // A dependency (Kafka, Postgres, ...) is down.
  service_unavailable: {
    status: 503,
    message: {
      pt: 'O serviço está temporariamente indisponível. Tente novamente em instantes.',
      en: 'The service is temporarily unavailable. Try again in a few moments.',
      es: 'El servicio no está disponible temporalmente. Vuelve a intentarlo en unos instantes.',
      it: 'Il servizio è temporaneamente non disponibile. Riprova tra qualche istante.',
      de: 'Der Dienst ist vorübergehend nicht verfügbar. Versuchen Sie es in Kürze erneut.',
      fr: 'Le service est temporairement indisponible. Réessayez dans quelques instants.',
    },
  },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof ERRORS;

/** Names of the `{name}` placeholders in a template, as a union of string literals. */
type Placeholders<T extends string> = T extends `${string}{${infer Name}}${infer Rest}`
  ? Name | Placeholders<Rest>
  : never;

/** Parameters a code's message can take; all are optional (see the bracket rule above). */
export type ErrorParams<C extends ErrorCode = ErrorCode> = Partial<
  Record<Placeholders<(typeof ERRORS)[C]['message']['en']>, string | number>
>;

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  locale: Locale;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERRORS, value);
}

export function statusOf(code: ErrorCode): number {
  return ERRORS[code].status;
}

const MAX_PARAM_LENGTH = 200;
const TOKEN = /\[([^[\]]*)\]|\{(\w+)\}/g;
const PLACEHOLDER = /\{(\w+)\}/g;
// eslint-disable-next-line no-control-regex -- stripping control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * A parameter as it may appear in a message: own properties only, control characters removed,
 * length capped (parameters can echo client input). Empty values count as missing.
 */
function paramText(params: Readonly<Record<string, unknown>>, name: string): string | undefined {
  if (!Object.hasOwn(params, name)) return undefined;
  const value = params[name];
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const text = String(value).replace(CONTROL_CHARACTERS, ' ').trim();
  if (text === '') return undefined;
  return text.length > MAX_PARAM_LENGTH ? `${text.slice(0, MAX_PARAM_LENGTH - 1)}…` : text;
}

/**
 * Fills a template in one pass over the template itself, so a parameter value that contains
 * `{...}` or `[...]` is never expanded again.
 */
export function renderTemplate(template: string, params: Readonly<Record<string, unknown>> = {}): string {
  return template.replace(TOKEN, (_match, optional: string | undefined, name: string | undefined) => {
    if (optional === undefined) return (name !== undefined && paramText(params, name)) || '';
    const values = new Map<string, string>();
    for (const [, inner = ''] of optional.matchAll(PLACEHOLDER)) {
      const text = paramText(params, inner);
      if (text === undefined) return '';
      values.set(inner, text);
    }
    return optional.replace(PLACEHOLDER, (_placeholder, inner: string) => values.get(inner) ?? '');
  });
}

export function errorMessage<C extends ErrorCode>(code: C, locale: Locale, params?: ErrorParams<C>): string {
  return renderTemplate(ERRORS[code].message[locale], params);
}

export function errorBody<C extends ErrorCode>(code: C, locale: Locale, params?: ErrorParams<C>): ErrorBody {
  return { code, message: errorMessage(code, locale, params), locale };
}

/** `pt-BR`, `PT_br` and `pt` all give `pt`; unsupported languages give undefined. */
export function toLocale(tag: string): Locale | undefined {
  const primary = tag.trim().split(/[-_]/)[0]?.toLowerCase();
  return LOCALES.find((locale) => locale === primary);
}

/** The supported language the client ranks highest in an Accept-Language header. */
function bestAcceptedLocale(header: string): Locale | undefined {
  const ranked: { locale: Locale; q: number; index: number }[] = [];
  header.split(',').forEach((range, index) => {
    const [tag = '', ...attributes] = range.split(';');
    let q = 1;
    for (const attribute of attributes) {
      const [key = '', value = ''] = attribute.split('=');
      if (key.trim().toLowerCase() === 'q') q = Number(value.trim());
    }
    const locale = toLocale(tag);
    // q=0 means "not acceptable"; a malformed q drops the range.
    if (locale !== undefined && q > 0 && q <= 1) ranked.push({ locale, q, index });
  });
  ranked.sort((a, b) => b.q - a.q || a.index - b.index);
  return ranked[0]?.locale;
}

/**
 * The language of an error message: the account's language when it is supported, then the best
 * Accept-Language match, then English.
 */
export function resolveLocale(preferred: string | undefined, acceptLanguage: string | undefined): Locale {
  return (
    (preferred !== undefined ? toLocale(preferred) : undefined) ??
    (acceptLanguage !== undefined ? bestAcceptedLocale(acceptLanguage) : undefined) ??
    DEFAULT_LOCALE
  );
}

/** Headers some codes always carry (spec 8.1: the smallest expressible wait). */
const DEFAULT_HEADERS: Partial<Record<ErrorCode, Readonly<Record<string, string>>>> = {
  rate_limited: { 'Retry-After': '1' },
};

export interface GatewayErrorOptions {
  headers?: Readonly<Record<string, string>>;
  cause?: unknown;
  /** An HTTP status other than the code's own: `invalid_request` for a body too large (413), a URL too long (414), an encoding refused (415). */
  status?: number;
}

/**
 * An error the API answers with its code, status and translated message. Its own `message` is the
 * English text, for logs.
 */
export class GatewayError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly statusCode: number;
  readonly params: ErrorParams<C>;
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(code: C, params: ErrorParams<C> = {}, options: GatewayErrorOptions = {}) {
    super(errorMessage(code, 'en', params), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.statusCode = options.status ?? ERRORS[code].status;
    this.params = params;
    const headers = { ...DEFAULT_HEADERS[code], ...options.headers };
    this.headers = Object.keys(headers).length > 0 ? headers : undefined;
  }
}

export function gatewayError<C extends ErrorCode>(
  code: C,
  params?: ErrorParams<C>,
  options?: GatewayErrorOptions,
): GatewayError<C> {
  return new GatewayError(code, params, options);
}

export function isLocale(value: string): value is Locale {
  return (LOCALES as readonly string[]).includes(value);
}
