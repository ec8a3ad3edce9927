export {
  prometheusMetrics,
  type PrometheusMetrics,
  type PrometheusMetricsOptions,
} from '../observability/prometheus-metrics';
