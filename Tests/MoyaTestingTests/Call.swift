import Foundation
import Moya
import MoyaTestServer

/// A target built field by field, for requests to a mock server: MoyaTestServer's ``Remote``
/// under the name the mock server tests use.
typealias Call = Remote

/// Sends `target` and returns the result (never throws).
func send(_ provider: MoyaProvider<Call>, _ target: Call) async -> Result<Response, MoyaError> {
    do {
        return .success(try await provider.request(target))
    } catch {
        return .failure(error)
    }
}
