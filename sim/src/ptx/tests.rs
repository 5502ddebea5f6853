// unit tests follow
