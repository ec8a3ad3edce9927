export { bullmqInbox, type BullmqInboxOptions } from './bullmq-inbox';
