// `swift run GatewayService <upstream URL> [port]`: the gateway, until SIGTERM or SIGINT.
//
//     curl localhost:8080/greeting      # through the session's cache after the first call
//     curl localhost:8080/slow/2        # the upstream answers after 2 seconds
//     curl localhost:8080/metrics       # Moya's client metrics, and the server's
//
// Port 0 picks a free one. Once the server listens, the program prints
// `GatewayService listening on http://127.0.0.1:<port>`. A graceful shutdown cancels the
// requests still running 10 seconds after it began, and the program exits; SHUTDOWN_LIMIT=<seconds>
// sets another limit, to fit the orchestrator's own grace period.
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
let shutdownLimit = ProcessInfo.processInfo.environment["SHUTDOWN_LIMIT"].flatMap(Double.init).flatMap { $0 > 0 ? Duration.seconds($0) : nil } ?? .seconds(10)

// One logger, one metrics registry and one tracer for the whole process, set up before anything
// that uses them is made (the session takes the tracer it finds when it is created).
var logger = Logger(label: "GatewayService")
logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
let registry = PrometheusCollectorRegistry()
MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
InstrumentationSystem.bootstrap(LogTracer(logger: logger))

let gateway = Gateway(upstream: upstream, registry: registry, logger: logger, shutdownLimit: shutdownLimit)
let application = gateway.makeApplication(port: port) { channel in
    print("GatewayService listening on http://127.0.0.1:\(channel.localAddress?.port ?? port)")
    fflush(nil)  // all streams: a parent process may wait for this line
}
try await gateway.makeServiceGroup(application: application).run()
