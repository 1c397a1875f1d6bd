// `swift run GatewayService <upstream URL> [port]`: the gateway, until SIGTERM or SIGINT.
//
//     curl localhost:8080/greeting      # through the session's cache after the first call
//     curl localhost:8080/slow/2        # the upstream answers after 2 seconds
//     curl localhost:8080/metrics       # Moya's client metrics, and the server's
import Foundation
import GatewayKit
import Logging
import Metrics
import Prometheus
import Tracing

let arguments = CommandLine.arguments
guard arguments.count >= 2, let upstream = URL(string: arguments[1]) else {
    print("usage: GatewayService <upstream URL> [port]")
    exit(2)
}
let port = arguments.count > 2 ? Int(arguments[2]) ?? 8080 : 8080

// One logger, one metrics registry and one tracer for the whole process, set up before anything
// that uses them is made (the session takes the tracer it finds when it is created).
var logger = Logger(label: "GatewayService")
logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
let registry = PrometheusCollectorRegistry()
MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
InstrumentationSystem.bootstrap(LogTracer(logger: logger))

let gateway = Gateway(upstream: upstream, registry: registry, logger: logger)
let application = gateway.makeApplication(port: port)
try await gateway.makeServiceGroup(application: application).run()
