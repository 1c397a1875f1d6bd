import Foundation
import Moya

/// Sends `target` through a provider with `plugins`, stubbed or real, completing on a
/// background queue, and returns the result.
func sendWithPlugins<T: TargetType>(_ target: T, plugins: [PluginType], stub: Bool = false, endpointClosure: MoyaProvider<T>.EndpointClosure? = nil) async
    -> Result<Moya.Response, MoyaError>
{
    let endpoints: MoyaProvider<T>.EndpointClosure = endpointClosure ?? { MoyaProvider<T>.defaultEndpointMapping(for: $0) }
    let stubs: MoyaProvider<T>.StubClosure = { _ in stub ? .immediate : .never }
    let provider = MoyaProvider<T>(endpointClosure: endpoints, stubClosure: stubs, plugins: plugins)
    return await send(provider, target)
}
