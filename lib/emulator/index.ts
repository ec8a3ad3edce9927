export {
  createEmulator,
  Emulator,
  type EmitOptions,
  type EmulatorOptions,
  type WaitOptions,
} from './create-emulator';
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
