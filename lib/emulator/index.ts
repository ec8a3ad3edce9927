export { createEmulator } from './create-emulator';
export type { EmulatorOptions } from './emulator-options';
export type { EmulatorMtlsOptions } from './emulator-tls';
export { Emulator, type EmitOptions } from './emulator';
export type { DeliveryFilter, WaitOptions } from './wait-until';
export type { ConsoleAccount } from './console-backend';
export type { AuthMethod } from '../console/console-wire';
export type {
  AttemptRecord,
  EmulatedDelivery,
  DeliveryState,
  EmitResult,
  EmulatedWebhook,
  EmulatorChange,
  HandshakeRecord,
  RegisterWebhookInput,
} from './emulator-types';
