import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension MoyaProvider {
    /// The default endpoint: the target's URL, method, task and headers, with its sample data as
    /// a `200` stub response.
    ///
    /// - Parameter target: The target.
    /// - Returns: Its endpoint.
    public final class func defaultEndpointMapping(for target: Target) -> Endpoint {
        Endpoint(
            url: URL.string(for: target),
            sampleResponseClosure: { .networkResponse(200, target.sampleData) },
            method: target.method,
            task: target.task,
            httpHeaderFields: target.headers
        )
    }

    /// The default request: `endpoint.urlRequest()`, handed over synchronously.
    ///
    /// `requestMapping`, `parameterEncoding` and `encodableMapping` errors pass through as they
    /// are; any other error is wrapped in ``MoyaError/underlying(_:_:)``.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - closure:  Receives the request or the error.
    public final class func defaultRequestMapping(for endpoint: Endpoint, closure: RequestResultClosure) {
        do {
            closure(.success(try endpoint.urlRequest()))
        } catch let error as MoyaError {
            closure(.failure(error))
        } catch {
            closure(.failure(MoyaError.underlying(error, nil)))
        }
    }

    /// The session a provider uses when given none: the shared ``Session/default``, which
    /// needs no shutdown.
    ///
    /// The name is Moya 15's, kept so that code written for it compiles. No Alamofire is
    /// involved: the session is this package's ``Session``, on AsyncHTTPClient, and new code can
    /// write `Session.default`.
    ///
    /// - Returns: The shared session.
    public final class func defaultAlamofireSession() -> Session {
        Session.default
    }

    /// Never stubs.
    public final class func neverStub(_: Target) -> Moya.StubBehavior {
        .never
    }

    /// Stubs every target immediately.
    public final class func immediatelyStub(_: Target) -> Moya.StubBehavior {
        .immediate
    }

    /// Stubs every target after `seconds`.
    ///
    /// - Parameter seconds: The delay.
    /// - Returns: A stub closure.
    public final class func delayedStub(_ seconds: TimeInterval) -> (Target) -> Moya.StubBehavior {
        { _ in .delayed(seconds: seconds) }
    }
}

/// Converts the parts of a finished exchange into a result, as Moya does.
///
/// - Parameters:
///   - response: The HTTP response, if any.
///   - request:  The request that was sent.
///   - data:     The body.
///   - error:    The error, if the exchange failed.
/// - Returns: A success when there is a response and no error; otherwise an `underlying` failure.
public func convertResponseToResult(_ response: HTTPURLResponse?, request: URLRequest?, data: Data?, error: Swift.Error?) -> Result<Moya.Response, MoyaError> {
    switch (response, data, error) {
    case (.some(let response), let data, .none):
        return .success(Moya.Response(statusCode: response.statusCode, data: data ?? Data(), request: request, response: response))
    case (.some(let response), _, .some(let error)):
        let response = Moya.Response(statusCode: response.statusCode, data: data ?? Data(), request: request, response: response)
        return .failure(MoyaError.underlying(error, response))
    case (_, _, .some(let error)):
        return .failure(MoyaError.underlying(error, nil))
    default:
        return .failure(MoyaError.underlying(NSError(domain: NSURLErrorDomain, code: NSURLErrorUnknown, userInfo: nil), nil))
    }
}
