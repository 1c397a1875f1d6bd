import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension MoyaProvider {
    /// The interceptors for `target`: the provider's, then the target's own (see
    /// ``RequestInterceptable``; a ``MultiTarget`` asks the target it wraps).
    func interceptors(for target: Target) -> InterceptorChain {
        guard targetsMayCustomize, let own = MoyaProvider.unwrapped(target, as: RequestInterceptable.self)?.interceptor else {
            return interceptorChain
        }
        return interceptorChain.appending(own)
    }

    /// `request` with the target's time limit (see ``TimeoutConfigurable``), if it has one.
    func applyingTimeout(of target: Target, to request: URLRequest) -> URLRequest {
        guard targetsMayCustomize, let timeout = MoyaProvider.unwrapped(target, as: TimeoutConfigurable.self)?.timeoutInterval, timeout > 0 else {
            return request
        }
        var request = request
        request.timeoutInterval = timeout
        return request
    }

    /// `target` as a `Capability`, or the target a ``MultiTarget`` wraps as one; `nil` when
    /// neither adopts it.
    static func unwrapped<Capability>(_ target: Target, as capability: Capability.Type) -> Capability? {
        if let capable = target as? Capability { return capable }
        if let multiTarget = target as? MultiTarget { return multiTarget.target as? Capability }
        return nil
    }
}
