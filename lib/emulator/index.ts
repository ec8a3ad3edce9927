export { createEmulator, type EmulatorOptions } from './create-emulator';
export { Emulator, type EmitOptions } from './emulator';
export type { WaitOptions } from './wait-until';
export type { ConsoleAccount } from './console-api';
export type {
  AttemptRecord,
  AuthMethod,
  DeliveryRecord,
  DeliveryState,
  EmitResult,
  EmulatedWebhook,
  RegisterWebhookInput,
} from './emulator-types';
