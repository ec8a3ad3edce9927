export {
  prometheusMetrics,
  type PrometheusMetrics,
  type PrometheusMetricsOptions,
} from '../observability/prometheus-metrics';
export { inboxMetrics, type InboxMetrics, type InboxMetricsOptions } from '../observability/inbox-metrics';
