import Moya
import Testing

/// Cancels `reader`, a task reading a stream, and expects it to end with the cancellation error
/// (``MoyaError/isCancelled``).
func expectCancelled<Value: Sendable>(
    _ reader: _Concurrency.Task<Value, any Error>, sourceLocation: SourceLocation = #_sourceLocation
) async {
    reader.cancel()
    let result = await reader.result
    guard case .failure(let error) = result else {
        Issue.record("expected the cancellation, got \(result)", sourceLocation: sourceLocation)
        return
    }
    #expect((error as? MoyaError)?.isCancelled == true, "\(error)", sourceLocation: sourceLocation)
}
