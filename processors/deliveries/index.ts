export { deliveriesProjection } from './projection.js';
export {
  attemptsOf,
  deliveryById,
  listDeliveries,
  type AttemptRow,
  type DeliveryPage,
  type DeliveryRow,
  type DeliveryStatus,
  type DeliveryWithBody,
} from './queries.js';
