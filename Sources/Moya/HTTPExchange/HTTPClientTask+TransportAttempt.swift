import AsyncHTTPClient

/// An AsyncHTTPClient task is the attempt a request's owner stops on a cancel.
extension HTTPClient.Task: TransportAttempt {}
