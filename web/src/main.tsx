import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Provider } from 'urql';
import { App } from './App';
import { createClient } from './lib/client';
import { Router } from './lib/router';
import './styles.css';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Provider value={createClient()}>
      <Router>
        <App />
      </Router>
    </Provider>
  </StrictMode>,
);
