import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an ``ExchangePluginType`` hears of an exchange besides the ``PluginType`` hooks.
public enum ExchangeEvent: Sendable {
    /// The provider's interceptors changed the request of an attempt before it was sent (an
    /// `AuthenticationInterceptor` added its `Authorization` header, say): `request` is what the
    /// attempt sends, `attempt` its number (1 for the first).
    case adapted(URLRequest, attempt: Int)

    /// The first bytes of a streamed request body (a file, an input stream, a
    /// `RequestBodyStream`), once more than ``ExchangePluginType/bodyPrefixLimit`` bytes were
    /// handed to the connection or the body ended, whichever came first. Heard once per
    /// request, for the first attempt that got that far.
    case requestBody(BodyPrefix)

    /// The head of a streamed response, as soon as it is handed to the caller and before its
    /// body is read. ``PluginType/didReceive(_:target:)`` hears of the end of the stream.
    case responseHead(Response)

    /// The first bytes of a streamed response's body, once more than
    /// ``ExchangePluginType/bodyPrefixLimit`` bytes arrived or the stream ended, whichever came
    /// first: before ``PluginType/didReceive(_:target:)``.
    case responseBody(BodyPrefix)
}
