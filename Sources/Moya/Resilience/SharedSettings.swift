/// A policy's settings behind a reference, for a state that every request writes: read only,
/// they stay out of the memory each request touches, and that memory is fewer cache lines to
/// move between the threads that admit a request and end it. The settings are copied in once
/// and never change, which is what makes sharing them safe.
final class SharedSettings<Value: Sendable>: Sendable {
    /// The settings.
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
