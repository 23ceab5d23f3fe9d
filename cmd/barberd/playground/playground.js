// Mounts GraphiQL (loaded from this server, see index.html) against the
// endpoint in #graphiql's data-endpoint. The headers editor starts with the
// API key header for the developer to fill in; headers are not persisted in
// the browser's storage, so the key is not either.
(function () {
  'use strict';
  var root = document.getElementById('graphiql');
  var defaultQuery = [
    '# barberd GraphQL. Paste your API key into the Headers tab below',
    '# ("X-Service-Api-Key"), then press the run button or Ctrl-Enter.',
    '',
    '{',
    '  bookableUnits {',
    '    id',
    '    name',
    '    timezone',
    '  }',
    '}',
    '',
  ].join('\n');
  ReactDOM.createRoot(root).render(
    React.createElement(GraphiQL, {
      fetcher: GraphiQL.createFetcher({ url: root.dataset.endpoint }),
      defaultQuery: defaultQuery,
      defaultHeaders: root.dataset.defaultHeaders,
      defaultEditorToolsVisibility: 'headers',
      shouldPersistHeaders: false,
    })
  );
})();
