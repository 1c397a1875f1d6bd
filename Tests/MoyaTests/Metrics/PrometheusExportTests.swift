import CoreMetrics
import Foundation
import MoyaTestServer
import Prometheus
import Testing

@testable import Moya

/// The request metrics as Prometheus exports them through swift-prometheus, set up as the
/// Metrics article shows.
@Suite("Request metrics exported to Prometheus")
struct PrometheusExportTests {
    let server: TestServer
    var base: URL { server.baseURL }

    init() async throws {
        server = try await TestServer.start()
    }

    @Test("Dots become underscores, series with different dimensions live side by side, the gauge returns to 0")
    func export() async throws {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.nameAndLabelSanitizer = { name, labels in
            name == "http.client.request.duration" ? ("http_client_request_duration_seconds", labels) : (name, labels)
        }
        let session = withMetricsFactory(factory) { Session() }
        let provider = MoyaProvider<Remote>(session: session)
        let stubbed = MoyaProvider<Remote>(stubClosure: MoyaProvider.immediatelyStub, session: session)
        _ = await send(provider, Remote(base, "/echo"))
        _ = await send(provider, Remote(base, "/status/404", validationType: .successCodes))
        _ = await send(stubbed, Remote(base, "/echo"))
        await #expect(throws: Never.self) { try await session.shutdown() }

        let page = registry.emitToString()
        let server = #"url_scheme="http",server_address="127.0.0.1",server_port="\#(base.port!)""#
        #expect(page.contains(#"# TYPE http_client_request_duration_seconds histogram"#), "\(page)")
        #expect(page.contains(#"http_client_request_duration_seconds_count{http_request_method="GET",\#(server),http_response_status_code="200"} 1"#))
        #expect(
            page.contains(
                #"http_client_request_duration_seconds_count{http_request_method="GET",\#(server),http_response_status_code="404",error_type="404"} 1"#))
        #expect(
            page.contains(
                #"http_client_request_duration_seconds_count{http_request_method="GET",url_scheme="http",moya_stubbed="true",http_response_status_code="200"} 1"#
            ))
        #expect(page.contains(#"http_client_active_requests{http_request_method="GET",\#(server)} 0.0"#))
        #expect(page.contains(#"# TYPE http_client_response_body_size histogram"#))
    }
}
