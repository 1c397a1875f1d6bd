import HTTPBinKit
import Moya
import MoyaTesting
import Testing

/// A provider that sends every `HTTPBin` target to `server`, the way the program sends them to
/// the URL it is given.
func provider(
    for server: MockServer,
    plugins: [PluginType] = [],
    interceptors: [RequestInterceptor] = []
) -> MoyaProvider<HTTPBin> {
    MoyaProvider<HTTPBin>(endpointClosure: HTTPBin.endpoints(at: server.baseURL), plugins: plugins, interceptors: interceptors)
}

/// The error `target` fails with; `nil`, and a test issue, when it succeeds.
func error(
    of target: HTTPBin,
    with provider: MoyaProvider<HTTPBin>,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> MoyaError? {
    do throws(MoyaError) {
        let response = try await provider.request(target)
        Issue.record("expected \(target.method.rawValue) \(target.path) to fail, got HTTP \(response.statusCode)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// The time between each request and the next, in arrival order.
func gaps(between requests: [MockRequest]) -> [Duration] {
    zip(requests, requests.dropFirst()).map { $1.arrivedAt - $0.arrivedAt }
}
