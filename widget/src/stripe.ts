/** The part of Stripe.js the component uses (https://docs.stripe.com/js). */
interface StripeJs {
  elements(options: { clientSecret: string; locale?: string }): StripeElements;
  confirmPayment(options: { elements: StripeElements; redirect: 'if_required' }): Promise<{ error?: { message?: string } }>;
  confirmPixPayment(clientSecret: string): Promise<{ error?: { message?: string } }>;
}
interface StripeElements {
  create(type: 'payment'): { mount(node: HTMLElement): void; destroy(): void };
}

declare global {
  interface Window {
    Stripe?: (publishableKey: string) => StripeJs;
  }
}

const STRIPE_JS = 'https://js.stripe.com/v3/';
let loading: Promise<(publishableKey: string) => StripeJs> | undefined;

/** Loads Stripe.js once per page, from Stripe (the host's CSP allows js.stripe.com, docs/widget.md). */
function stripeJs(): Promise<(publishableKey: string) => StripeJs> {
  loading ??= new Promise((resolve, reject) => {
    if (window.Stripe) return resolve(window.Stripe);
    const script = document.createElement('script');
    script.src = STRIPE_JS;
    script.async = true;
    script.onload = () => (window.Stripe ? resolve(window.Stripe) : reject(new Error('Stripe.js did not load')));
    script.onerror = () => {
      loading = undefined;
      reject(new Error('Stripe.js could not be loaded'));
    };
    document.head.append(script);
  });
  return loading;
}

/**
 * Mounts Stripe's Payment Element for a card payment in `slot` (a light-DOM node: Stripe's frames
 * cannot live in a shadow root) and returns how to confirm it; card data never reaches us.
 */
export async function mountCard(publishableKey: string, clientSecret: string, slot: HTMLElement, locale: string) {
  const stripe = (await stripeJs())(publishableKey);
  const elements = stripe.elements({ clientSecret, locale });
  const element = elements.create('payment');
  element.mount(slot);
  return {
    confirm: async () => (await stripe.confirmPayment({ elements, redirect: 'if_required' })).error?.message,
    destroy: () => element.destroy(),
  };
}

/** Shows Stripe's Pix QR for the payment; resolves with an error message, if any. */
export async function confirmPix(publishableKey: string, clientSecret: string): Promise<string | undefined> {
  const stripe = (await stripeJs())(publishableKey);
  return (await stripe.confirmPixPayment(clientSecret)).error?.message;
}
