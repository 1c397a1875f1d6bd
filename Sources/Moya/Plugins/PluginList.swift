import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs one plugin hook on every plugin of a provider, in order.
///
/// A plugin takes the target as `any TargetType`; a target larger than an existential's inline
/// buffer is copied into a new heap box at each conversion. These helpers take it boxed
/// (`anyTarget:`): the provider boxes it once per request, and not at all when there are no
/// plugins, instead of once per plugin and hook.
extension Array where Element == any PluginType {
    /// `prepare` through every plugin, then `willSend` on every plugin with the request that
    /// `makeRequestType` wraps; returns the prepared request. One boxed target serves both hooks.
    func prepareAndAnnounce(_ request: URLRequest, anyTarget target: any TargetType, makeRequestType: (URLRequest) -> any RequestType) -> URLRequest {
        guard !isEmpty else { return request }
        var request = request
        for plugin in self {
            request = plugin.prepare(request, target: target)
        }
        let requestType = makeRequestType(request)
        for plugin in self {
            plugin.willSend(requestType, target: target)
        }
        return request
    }

    /// `didReceive` on every plugin.
    func didReceive(_ result: Result<Moya.Response, MoyaError>, anyTarget target: any TargetType) {
        guard !isEmpty else { return }
        for plugin in self {
            plugin.didReceive(result, target: target)
        }
    }

    /// `process` through every plugin; returns the last plugin's result.
    func process(_ result: Result<Moya.Response, MoyaError>, anyTarget target: any TargetType) -> Result<Moya.Response, MoyaError> {
        guard !isEmpty else { return result }
        var result = result
        for plugin in self {
            result = plugin.process(result, target: target)
        }
        return result
    }

    /// `willRetry` on every plugin.
    func willRetry(_ request: URLRequest, after result: Result<Moya.Response, MoyaError>, attempt: Int, anyTarget target: any TargetType) {
        guard !isEmpty else { return }
        for plugin in self {
            plugin.willRetry(request, after: result, attempt: attempt, target: target)
        }
    }

    // The hooks the stubs use, for a target of a concrete type: it is boxed only when there are
    // plugins.

    func prepareAndAnnounce<T: TargetType>(_ request: URLRequest, target: T, makeRequestType: (URLRequest) -> any RequestType) -> URLRequest {
        isEmpty ? request : prepareAndAnnounce(request, anyTarget: target, makeRequestType: makeRequestType)
    }

    func didReceive<T: TargetType>(_ result: Result<Moya.Response, MoyaError>, target: T) {
        if !isEmpty { didReceive(result, anyTarget: target) }
    }
}
