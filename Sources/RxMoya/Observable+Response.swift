#if RxMoya
import Foundation
import Moya
import RxSwift

extension ObservableType where Element == Response {
    /// Passes on the responses whose status code is in `statusCodes`; fails with
    /// `MoyaError.statusCode` at the first other one.
    ///
    /// - Parameter statusCodes: The accepted codes.
    /// - Returns: An `Observable` of the accepted responses.
    public func filter<R: RangeExpression>(statusCodes: R) -> Observable<Response> where R.Bound == Int {
        map { try $0.filter(statusCodes: statusCodes) }
    }

    /// Passes on the responses whose status code is `statusCode`; fails with `MoyaError.statusCode`
    /// at the first other one.
    ///
    /// - Parameter statusCode: The accepted code.
    /// - Returns: An `Observable` of the accepted responses.
    public func filter(statusCode: Int) -> Observable<Response> {
        map { try $0.filter(statusCode: statusCode) }
    }

    /// Passes on the responses whose status code is in 200...299; fails with
    /// `MoyaError.statusCode` at the first other one.
    ///
    /// ```swift
    /// let disposable = provider.rx.request(.userProfile("moya"))
    ///     .asObservable()
    ///     .filterSuccessfulStatusCodes()
    ///     .map(User.self)
    ///     .subscribe(onNext: { print($0.login) }, onError: { print($0) })
    /// ```
    ///
    /// - Returns: An `Observable` of the successful responses.
    public func filterSuccessfulStatusCodes() -> Observable<Response> {
        map { try $0.filterSuccessfulStatusCodes() }
    }

    /// Passes on the responses whose status code is in 200...399; fails with
    /// `MoyaError.statusCode` at the first other one.
    ///
    /// - Returns: An `Observable` of the successful and redirect responses.
    public func filterSuccessfulStatusAndRedirectCodes() -> Observable<Response> {
        map { try $0.filterSuccessfulStatusAndRedirectCodes() }
    }

    #if canImport(UIKit) || canImport(AppKit)
    /// Maps each body to an image, failing with `MoyaError.imageMapping`.
    ///
    /// Only available where UIKit or AppKit exist.
    ///
    /// - Returns: An `Observable` of images.
    public func mapImage() -> Observable<Image> {
        map { try $0.mapImage() }
    }
    #endif

    /// Maps each body to a JSON object, as `Response.mapJSON(failsOnEmptyData:)` does, failing
    /// with `MoyaError.jsonMapping`.
    ///
    /// - Parameter failsOnEmptyData: Whether an empty body is an error (otherwise it maps to `NSNull`).
    /// - Returns: An `Observable` of JSON objects.
    public func mapJSON(failsOnEmptyData: Bool = true) -> Observable<Any> {
        map { try $0.mapJSON(failsOnEmptyData: failsOnEmptyData) }
    }

    /// Maps each body, or the string at a key path of its JSON, to a string, as
    /// `Response.mapString(atKeyPath:)` does, failing with `MoyaError.stringMapping`.
    ///
    /// - Parameter keyPath: A dotted key path into the top-level JSON dictionary, or `nil`.
    /// - Returns: An `Observable` of strings.
    public func mapString(atKeyPath keyPath: String? = nil) -> Observable<String> {
        map { try $0.mapString(atKeyPath: keyPath) }
    }

    /// Decodes each body, or the value at a key path of its JSON, as
    /// `Response.map(_:atKeyPath:using:failsOnEmptyData:)` does, failing with
    /// `MoyaError.objectMapping`.
    ///
    /// - Parameters:
    ///   - type:             The type to decode.
    ///   - keyPath:          A dotted key path into the top-level JSON dictionary, or `nil`.
    ///   - decoder:          The decoder to use.
    ///   - failsOnEmptyData: Whether an empty body (or a missing key path) is an error.
    /// - Returns: An `Observable` of decoded values.
    public func map<D: Decodable>(
        _ type: D.Type,
        atKeyPath keyPath: String? = nil,
        using decoder: JSONDecoder = JSONDecoder(),
        failsOnEmptyData: Bool = true
    ) -> Observable<D> {
        map { try $0.map(type, atKeyPath: keyPath, using: decoder, failsOnEmptyData: failsOnEmptyData) }
    }
}
#endif
